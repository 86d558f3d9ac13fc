package term

import (
	"strings"
	"testing"
)

// What a peer sends cannot drive the terminal; what it says still reads.
func TestSanitize(t *testing.T) {
	for _, tc := range []struct{ in, want, line string }{
		{"设置音量。Set the volume.", "设置音量。Set the volume.", ""},
		{"two\nlines\tand a tab", "two\nlines\tand a tab", `two\nlines\tand a tab`},
		{"\x1b]0;pwned\x07title", `\x1b]0;pwned\x07title`, ""},
		{"\x1b[2J\x1b[Hclear", `\x1b[2J\x1b[Hclear`, ""},
		{"\x1b]52;c;Y3VybCBldmlsfHNo\x1b\\clipboard", `\x1b]52;c;Y3VybCBldmlsfHNo\x1b\clipboard`, ""},
		{"over\rwrite\b\x7f", `over\rwrite\x08\x7f`, ""},
		{"c1 \u009b2J \u009d0;t\u009c", `c1 \u009b2J \u009d0;t\u009c`, ""},
		{"bidi \u202eexe.txt\u202c \u2066x\u2069 \u200f", `bidi \u202eexe.txt\u202c \u2066x\u2069 \u200f`, ""},
		{"bad \xff\xfe utf-8", `bad \xff\xfe utf-8`, ""},
		{"emoji 😀 and a zero-width joiner 👩\u200d💻", "emoji 😀 and a zero-width joiner 👩\u200d💻", ""},
		{"", "", ""},
	} {
		if got := Sanitize(tc.in); got != tc.want {
			t.Errorf("Sanitize(%q) = %q, want %q", tc.in, got, tc.want)
		}
		wantLine := tc.line
		if wantLine == "" {
			wantLine = tc.want
		}
		if got := SanitizeLine(tc.in); got != wantLine {
			t.Errorf("SanitizeLine(%q) = %q, want %q", tc.in, got, wantLine)
		}
		if strings.ContainsAny(Sanitize(tc.in), "\x1b\r\x07\u009b\u202e") {
			t.Errorf("Sanitize(%q) left a control character", tc.in)
		}
	}
}
