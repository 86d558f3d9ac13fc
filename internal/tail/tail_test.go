package tail

import (
	"strings"
	"testing"
)

func TestBuffer(t *testing.T) {
	cases := []struct {
		name   string
		max    int
		writes []string
		want   string
	}{
		{"nothing", 8, nil, ""},
		{"fits, trimmed", 8, []string{" ab", "c\n"}, "abc"},
		{"exactly max", 4, []string{"abcd"}, "abcd"},
		{"cut across writes", 4, []string{"abc", "def"}, "…cdef"},
		{"cut inside a character", 5, []string{"xx", "é", "abcd"}, "…abcd"},
		{"only space left after a cut", 2, []string{"abc", "  "}, ""},
		{"no limit", 0, []string{strings.Repeat("a", 5000)}, strings.Repeat("a", 5000)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := Buffer{Max: tc.max}
			for _, w := range tc.writes {
				if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			if got := b.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
		})
	}
}

// A long stream keeps memory at the bound.
func TestBufferStaysBounded(t *testing.T) {
	b := Buffer{Max: 1024}
	chunk := []byte(strings.Repeat("x", 100))
	for range 10000 {
		b.Write(chunk)
	}
	if len(b.b) != 1024 || cap(b.b) > 4096 {
		t.Errorf("kept %d bytes in a buffer of %d, want 1024 in a small one", len(b.b), cap(b.b))
	}
}
