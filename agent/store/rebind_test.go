package store

import "testing"

func TestRebind(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`SELECT * FROM t WHERE a = ? AND b IN (?, ?)`, `SELECT * FROM t WHERE a = $1 AND b IN ($2, $3)`},
		{`SELECT '?', ?`, `SELECT '?', $1`},
		{`SELECT 'it''s ?', ?`, `SELECT 'it''s ?', $1`},
		{`SELECT E'\'?', ?`, `SELECT E'\'?', $1`},
		{`SELECT e'\\', ?`, `SELECT e'\\', $1`},
		{`SELECT 'a\', ?`, `SELECT 'a\', $1`}, // standard strings: the backslash is a character
		{`SELECT "col?" FROM t WHERE x = ?`, `SELECT "col?" FROM t WHERE x = $1`},
		{`SELECT "a""?" , ?`, `SELECT "a""?" , $1`},
		{"SELECT ? -- why?\n, ?", "SELECT $1 -- why?\n, $2"},
		{"SELECT ? -- why?", "SELECT $1 -- why?"},
		{`SELECT /* a /* nested? */ still? */ ?`, `SELECT /* a /* nested? */ still? */ $1`},
		{`SELECT $$?$$, $tag$ ? $x$ ?$tag$, ?`, `SELECT $$?$$, $tag$ ? $x$ ?$tag$, $1`},
		{`SELECT $1, ?`, `SELECT $1, $1`}, // $1 is no dollar quote; mixing styles is the caller's error
		{`SELECT a$b, ?`, `SELECT a$b, $1`},
		{`SELECT ?::tsvector, CAST(? AS tsquery)`, `SELECT $1::tsvector, CAST($2 AS tsquery)`},
		{`SELECT '?`, `SELECT '?`}, // unterminated: left as it is, for the server to refuse
		{`SELECT 1 /* ?`, `SELECT 1 /* ?`},
		{`SELECT ?0`, `SELECT $0`},                // SQLite's numbered form keeps its number
		{`SELECT ?2, ?, ?1`, `SELECT $2, $3, $1`}, // a bare ? after ?2 is the third, as in SQLite
		{`SELECT ?, ?1`, `SELECT $1, $1`},
	} {
		if got := rebind(tc.in); got != tc.want {
			t.Errorf("rebind(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzRebind(f *testing.F) {
	for _, s := range []string{`SELECT ?`, `'?'`, `"?"`, "-- ?\n?", `/* ? */ ?`, `$a$?$a$ ?`, `E'\'' ?`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		got := rebind(q)
		// Only placeholders change: taking every $N back to ? gives q again when q held no $
		// followed by a digit of its own.
		if !containsDollarDigit(q) && !containsDigitAfter(q, '?') && undo(got) != q {
			t.Errorf("rebind(%q) = %q", q, got)
		}
	})
}

func containsDollarDigit(s string) bool { return containsDigitAfter(s, '$') }

func containsDigitAfter(s string, c byte) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == c && s[i+1] >= '0' && s[i+1] <= '9' {
			return true
		}
	}
	return false
}

// undo turns $N back into ?.
func undo(s string) string {
	var out []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '$' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' {
			out = append(out, '?')
			for i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' {
				i++
			}
			continue
		}
		out = append(out, s[i])
	}
	return string(out)
}
