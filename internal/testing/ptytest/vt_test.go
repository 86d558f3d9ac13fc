package ptytest

import (
	"strings"
	"testing"
)

// The screen does what xterm does with the bytes a line editor writes.
func TestVT(t *testing.T) {
	x79 := strings.Repeat("x", 79)
	for _, tc := range []struct {
		name     string
		in       string
		rows     []string // the first rows; the rest blank
		row, col int
	}{
		{"carriage return overwrites", "ab\rc", []string{"cb"}, 0, 1},
		{"the cursor waits in the last column", x79 + "yz", []string{x79 + "y", "z"}, 1, 1},
		{"CR LF after a full row goes down one row", x79 + "y\r\nz", []string{x79 + "y", "z"}, 1, 1},
		{"a wide character that does not fit wraps", x79 + "中", []string{x79, "中"}, 1, 2},
		{"a wide character takes two cells", "中文a", []string{"中文a"}, 0, 5},
		{"half a wide character overwritten erases it", "中文\ra", []string{"a文"}, 0, 1},
		{"cursor moves and erase in line", "abcdef\x1b[3D\x1b[K\x1b[2Dz", []string{"azc"}, 0, 2},
		{"erase to the end of the screen", "one\r\ntwo\r\nthree\x1b[2A\rnew\x1b[J", []string{"new", "", ""}, 0, 3},
		{"erase the whole screen and go home", "one\r\ntwo\x1b[2J\x1b[Hz", []string{"z", ""}, 0, 1},
		{"down and right", "a\x1b[2B\x1b[3Cb", []string{"a", "", "b"}, 2, 5},
		{"colours and OSC change nothing", "\x1b[31mred\x1b[0m\x1b]0;title\x07!\x1b]2;t\x1b\\", []string{"red!"}, 0, 4},
		{"a newline without the driver's CR only moves down", "ab\ncd", []string{"ab", "cd"}, 1, 4},
		{"backspace moves left without erasing", "ab\bc", []string{"ac"}, 0, 2},
	} {
		v := NewVT(80, 5)
		// Byte by byte too: a character or sequence split between writes.
		split := NewVT(80, 5)
		v.Write([]byte(tc.in))
		for i := range len(tc.in) {
			split.Write([]byte{tc.in[i]})
		}
		for _, s := range []*VT{v, split} {
			for i, want := range tc.rows {
				if got := s.Row(i); got != want {
					t.Errorf("%s: row %d %q, want %q\n%s", tc.name, i, got, want, s)
				}
			}
			if r, c := s.Cursor(); r != tc.row || c != tc.col {
				t.Errorf("%s: cursor at %d,%d, want %d,%d", tc.name, r, c, tc.row, tc.col)
			}
		}
	}
}

// At the bottom a line feed scrolls; Split reads an editor's line from its prompt's row.
func TestVTScrollAndSplit(t *testing.T) {
	v := NewVT(10, 3)
	v.Write([]byte("1\r\n2\r\n> abcdefgh中文\x1b[4D"))
	if got := []string{v.Row(0), v.Row(1), v.Row(2)}; strings.Join(got, "|") != "2|> abcdefgh|中文" {
		t.Errorf("rows %q after scrolling\n%s", got, v)
	}
	before, after, ok := v.Split("> ")
	if !ok || before != "> abcdefgh" || after != "中文" {
		t.Errorf("Split: %q, %q, %v\n%s", before, after, ok, v)
	}
	if _, _, ok := v.Split("$ "); ok {
		t.Error("Split found a prompt that is not on the screen")
	}
}
