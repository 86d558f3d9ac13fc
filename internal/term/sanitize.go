package term

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Sanitize makes text from a peer (a device's tool names and descriptions, an agent's reply, an
// error a device sent) safe to show on a terminal: every control character but newline and tab,
// C1 controls included, is written as a Go escape (\x1b, \r, \u009b), and so are invalid UTF-8
// and the bidirectional overrides and isolates, which reorder what is shown. An escape sequence
// (a colour, a cursor move, an OSC title or clipboard write) therefore shows as text and drives
// nothing; the rest, Chinese included, is unchanged.
func Sanitize(s string) string { return sanitize(s, false) }

// SanitizeLine is Sanitize for what must stay on one line (a name, a column of a table): newline
// and tab are escaped too.
func SanitizeLine(s string) string { return sanitize(s, true) }

func sanitize(s string, line bool) string {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if mustEscape(r, n, line) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case !mustEscape(r, n, line):
			b.WriteString(s[i : i+n])
		case r == utf8.RuneError:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += n
	}
	return b.String()
}

// mustEscape tells whether the rune r, n bytes of UTF-8, must not reach a terminal as it is;
// newline and tab may unless line.
func mustEscape(r rune, n int, line bool) bool {
	switch {
	case r == '\n' || r == '\t':
		return line
	case r < 0x20 || r >= 0x7f && r < 0xa0:
		return true // C0, DEL, C1
	case r == utf8.RuneError && n == 1:
		return true
	}
	switch r {
	case 0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069:
		return true // bidi marks, embeddings, overrides and isolates
	}
	return false
}
