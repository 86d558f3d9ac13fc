package term_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/devicectl/devicectl/internal/term"
	"github.com/devicectl/devicectl/internal/testing/ptytest"
)

// keyboard hands the editor the keys a test types, one batch per Read. Before each Read it says
// so on waiting: the editor has drawn everything it was given.
type keyboard struct {
	keys    chan string
	waiting chan struct{}
	done    chan struct{}
	rest    string
}

func (k *keyboard) Read(p []byte) (int, error) {
	if k.rest == "" {
		select {
		case k.waiting <- struct{}{}:
		case <-k.done:
			return 0, io.EOF
		}
		select {
		case s, ok := <-k.keys:
			if !ok {
				return 0, io.EOF
			}
			k.rest = s
		case <-k.done:
			return 0, io.EOF
		}
	}
	n := copy(p, k.rest)
	k.rest = k.rest[n:]
	return n, nil
}

// onlcr is the terminal driver's output processing: a newline returns the carriage.
type onlcr struct{ w io.Writer }

func (o onlcr) Write(p []byte) (int, error) {
	_, err := o.w.Write(bytes.ReplaceAll(p, []byte("\n"), []byte("\r\n")))
	return len(p), err
}

type result struct {
	line string
	err  error
}

// session runs an Editor on an 80-column screen, a line at a time.
type session struct {
	t       *testing.T
	ed      *term.Editor
	vt      *ptytest.VT
	kb      *keyboard
	results chan result
	reading bool
}

const prompt = "t> "

func newSession(t *testing.T, cols int) *session {
	kb := &keyboard{keys: make(chan string), waiting: make(chan struct{}), done: make(chan struct{})}
	vt := ptytest.NewVT(cols, 12)
	s := &session{t: t, vt: vt, kb: kb, results: make(chan result, 1)}
	s.ed = term.NewEditor(kb, onlcr{vt}, prompt, func() int { return cols })
	t.Cleanup(func() {
		close(kb.done)
		if s.reading {
			<-s.results
		}
	})
	return s
}

// typ types keys and waits until the editor has drawn them, or returned a line.
func (s *session) typ(keys string) (r result, returned bool) {
	s.t.Helper()
	if !s.reading {
		s.reading = true
		go func() {
			line, err := s.ed.ReadLine()
			s.results <- result{line, err}
		}()
		<-s.kb.waiting
	}
	s.kb.keys <- keys
	select {
	case <-s.kb.waiting:
		return result{}, false
	case r := <-s.results:
		s.reading = false
		return r, true
	}
}

// edit types keys and checks the screen: the prompt and the line, with the cursor where | is,
// and nothing else from the prompt's row down.
func (s *session) edit(keys, want string) {
	s.t.Helper()
	if r, returned := s.typ(keys); returned {
		s.t.Fatalf("typing %q returned %q, %v; want the line still edited", keys, r.line, r.err)
	}
	s.check(want)
}

func (s *session) check(want string) {
	s.t.Helper()
	wantBefore, wantAfter, _ := strings.Cut(want, "|")
	before, after, ok := s.vt.Split(prompt)
	if !ok || before != prompt+wantBefore || after != wantAfter {
		s.t.Fatalf("the screen shows %q|%q (| the cursor), want %q|%q:\n%s", before, after, prompt+wantBefore, wantAfter, s.vt)
	}
}

// enter presses Enter and checks the line returned is the one the screen showed.
func (s *session) enter(want string) {
	s.t.Helper()
	shown, rest, _ := s.vt.Split(prompt)
	shown = strings.TrimPrefix(shown, prompt) + rest
	r, returned := s.typ("\r")
	if !returned {
		s.t.Fatal("Enter did not end the line")
	}
	if r.err != nil || r.line != want || shown != want {
		s.t.Fatalf("Enter returned %q, %v, with %q shown; want %q", r.line, r.err, shown, want)
	}
	if row, col := s.vt.Cursor(); col != 0 || s.vt.Row(row) != "" {
		s.t.Fatalf("after Enter the cursor is at %d,%d, want the start of a blank row:\n%s", row, col, s.vt)
	}
}

var (
	cjk40 = strings.Repeat("请把音量调到三十", 5) // 40 characters, 80 columns
	cjk   = []rune(cjk40)
)

func prefix(n int) string { return string(cjk[:n]) }
func suffix(n int) string { return string(cjk[n:]) }

// A Chinese line wider than the terminal wraps, and every edit of it redraws what it took: the
// screen shows the line Enter returns, the cursor where the next key acts.
func TestEditorWideLines(t *testing.T) {
	s := newSession(t, 80)
	s.edit(cjk40, cjk40+"|")
	s.edit(strings.Repeat("\x7f", 10), prefix(30)+"|")
	s.enter(prefix(30))

	// Ctrl-A, five to the right, Ctrl-K, and a character typed there.
	s.edit(cjk40+"abc", cjk40+"abc|")
	s.edit("\x01", "|"+cjk40+"abc")
	s.edit("\x06\x06\x06\x06\x06", prefix(5)+"|"+suffix(5)+"abc")
	s.edit("\x0b", prefix(5)+"|")
	s.edit("好", prefix(5)+"好|")
	s.enter(prefix(5) + "好")

	// Inserting in the middle of a wrapped line pushes the rest across the wrap.
	s.edit(cjk40, cjk40+"|")
	s.edit("\x1b[H"+strings.Repeat("\x1b[C", 20), prefix(20)+"|"+suffix(20))
	s.edit("好的", prefix(20)+"好的|"+suffix(20))
	s.edit("\x1b[F", prefix(20)+"好的"+suffix(20)+"|")
	s.enter(prefix(20) + "好的" + suffix(20))

	// Ctrl-U deletes to the start; Ctrl-W the word before the cursor.
	s.edit(cjk40+strings.Repeat("\x1b[D", 10), prefix(30)+"|"+suffix(30))
	s.edit("\x15", "|"+suffix(30))
	s.edit("\x1b[F hello 世界 ", suffix(30)+" hello 世界 |")
	s.edit("\x17", suffix(30)+" hello |")
	s.enter(suffix(30) + " hello ")

	// Ctrl-D deletes the character under the cursor; Delete too.
	s.edit("音量\x02\x02\x04", "|量")
	s.edit("\x1b[3~", "|")
	s.enter("")
}

// Up and down go through the lines entered before; a long one replaced by a short one leaves
// no row behind.
func TestEditorHistory(t *testing.T) {
	s := newSession(t, 80)
	s.edit(cjk40+"x", cjk40+"x|")
	s.enter(cjk40 + "x")
	s.edit("短", "短|")
	s.enter("短")
	s.edit("half", "half|")
	s.edit("\x1b[A", "短|")
	s.edit("\x1b[A", cjk40+"x|")
	s.edit("\x1b[A", cjk40+"x|") // no older line
	s.edit("\x1b[B", "短|")
	s.edit("\x1b[B", "half|") // back to the line being typed
	s.edit("\x1b[B", "half|")
	s.edit("\x10\x10", cjk40+"x|")
	s.edit("\x0e", "短|")
	s.edit("\x10", cjk40+"x|")
	s.enter(cjk40 + "x")
}

// The right margin: a wide character that does not fit in the last column starts the next
// row, and a row filled exactly puts the cursor at the start of the next.
func TestEditorMargin(t *testing.T) {
	s := newSession(t, 80)
	s.edit(prefix(38), prefix(38)+"|") // 3 + 76 columns
	s.edit("中", prefix(38)+"中|")       // column 79 is too narrow: 中 starts row 2
	if row, col := s.vt.Cursor(); row != 1 || col != 2 {
		t.Errorf("cursor at %d,%d, want 1,2:\n%s", row, col, s.vt)
	}
	s.edit("\x02", prefix(38)+"|中")
	if row, col := s.vt.Cursor(); row != 1 || col != 0 {
		t.Errorf("cursor on the wrapped character at %d,%d, want 1,0:\n%s", row, col, s.vt)
	}
	s.edit("\x15", "|中")
	s.enter("中")

	x77 := strings.Repeat("x", 77)
	s.edit(x77, x77+"|")
	if _, col := s.vt.Cursor(); col != 0 {
		t.Errorf("a full row: cursor in column %d, want 0:\n%s", col, s.vt)
	}
	s.edit("\x7f", x77[1:]+"|")
	s.edit("y", x77[1:]+"y|")
	s.enter(x77[1:] + "y")
}

// A key can arrive split between reads: an escape sequence, a UTF-8 character. Controls,
// unknown sequences and bidi overrides typed or pasted are not taken into the line.
func TestEditorInput(t *testing.T) {
	s := newSession(t, 80)
	zh := "中"
	s.edit("ab\x1b", "ab|")
	s.edit("[D", "a|b")
	s.edit(zh[:1], "a|b")
	s.edit(zh[1:], "a中|b")
	s.edit("\x1b[15~\u202e\x07\x1bx", "a中|b")
	s.edit("\tc\x1b[1;5D", "a中 |cb")
	s.edit("\x1bb", "|a中 cb")
	s.edit("\x1bf", "a中| cb")
	s.enter("a中 cb")

	// Keys typed ahead of the Enter's line wait for the next.
	if r, ok := s.typ("one\rtwo"); !ok || r.line != "one" {
		t.Fatalf("typed ahead: %q, %v", r.line, ok)
	}
	s.edit("", "two|")
	s.enter("two")
	s.edit("", "|")
	if r, ok := s.typ("\x04"); !ok || !errors.Is(r.err, io.EOF) {
		t.Errorf("Ctrl-D on an empty line: %q, %v; want io.EOF", r.line, r.err)
	}
}

// What the program prints while a line is edited goes above the line, which is drawn again.
func TestEditorWrite(t *testing.T) {
	s := newSession(t, 80)
	s.edit(cjk40+"\x01\x06", prefix(1)+"|"+suffix(1))
	if _, err := s.ed.Write([]byte("+ AA-BB-CC-DD-EE-01 registered\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ed.Write([]byte("half a line")); err != nil {
		t.Fatal(err)
	}
	s.check(prefix(1) + "|" + suffix(1))
	if s.vt.Row(0) != "+ AA-BB-CC-DD-EE-01 registered" || s.vt.Row(1) != "half a line" {
		t.Errorf("the text written is not above the line:\n%s", s.vt)
	}
	s.enter(cjk40)
	if _, err := s.ed.Write([]byte("out\n")); err != nil {
		t.Fatal(err)
	}
	if row, _ := s.vt.Cursor(); s.vt.Row(row-1) != "out" {
		t.Errorf("between lines the output is written as it is:\n%s", s.vt)
	}
}

// Widths as terminals draw them.
func TestRuneWidth(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want int
	}{
		{"abc", 3}, {"中文", 4}, {"、。", 4}, {"ｈｉ", 4}, {"ﾊﾝｶｸ", 4}, {"한국", 4}, {"かな", 4},
		{"😀", 2}, {"e\u0301", 1}, {"\x1b\r\u009b", 0}, {"\u200d", 0}, {"é", 1}, {"\u3000", 2},
		{"𠀀", 2}, {"", 0},
	} {
		if got := term.StringWidth(tc.s); got != tc.want {
			t.Errorf("StringWidth(%q) = %d, want %d", tc.s, got, tc.want)
		}
	}
	if utf8.RuneCountInString(cjk40) != 40 || term.StringWidth(cjk40) != 80 {
		t.Fatal("cjk40 is not 40 characters 80 columns wide")
	}
}
