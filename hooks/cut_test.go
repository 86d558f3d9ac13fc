package hooks

import (
	"strings"
	"testing"
)

func TestCut(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    string
		max  int
		want string
	}{
		{"short", "abc", 4, "abc"},
		{"exact", "abcd", 4, "abcd"},
		{"ascii", "abcdef", 4, "abcd"},
		{"two-byte split", "aé", 2, "a"},
		{"two-byte whole", "aéb", 3, "aé"},
		{"three-byte split", "ab中", 4, "ab"},
		{"four-byte split", "a😀", 4, "a"},
		{"four-byte whole", "a😀b", 5, "a😀"},
		{"zero", "abc", 0, ""},
		{"not UTF-8", strings.Repeat("\x80", 10), 8, strings.Repeat("\x80", 5)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := cut(tc.s, tc.max); got != tc.want {
				t.Errorf("cut(%q, %d) = %q, want %q", tc.s, tc.max, got, tc.want)
			}
		})
	}
}

func TestValidKey(t *testing.T) {
	for k, want := range map[string]bool{
		"TOOL": true, "A_1": true, "_": true, "9": true,
		"": false, "tool": false, "A-B": false, "A B": false, "É": false, "A=B": false, "A\x00": false,
	} {
		if got := validKey(k); got != want {
			t.Errorf("validKey(%q) = %v, want %v", k, got, want)
		}
	}
}
