package faces

import (
	"image"
	"image/color"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/devicectl/devicectl/hal"
)

// img builds a Gray image from rows of '#' (lit) and '.' (unlit).
func img(rows ...string) *image.Gray {
	w := 0
	if len(rows) > 0 {
		w = len(rows[0])
	}
	g := image.NewGray(image.Rect(0, 0, w, len(rows)))
	for y, row := range rows {
		for x, c := range row {
			if c == '#' {
				g.SetGray(x, y, color.Gray{0xff})
			}
		}
	}
	return g
}

func TestTerminal(t *testing.T) {
	tests := []struct {
		name string
		img  image.Image
		want string
	}{
		{"empty", img(), ""},
		{"one lit pixel, odd height", img("#"), "▀\n"},
		{"one unlit pixel", img("."), "\n"},
		{"all four cells", img(
			"##..",
			"#.#.",
		), "█▀▄\n"},
		{"trailing unlit columns trimmed, leading kept", img(
			"..#..",
			"..#..",
			".....",
			".#...",
		), "  █\n ▄\n"},
		{"odd last row pairs with unlit", img(
			"#.",
			"#.",
			"##",
		), "█\n▀▀\n"},
		{"blank rows keep their line", img(
			"..",
			"..",
			"#.",
			"..",
		), "\n▀\n"},
		{"bounds not at the origin", img(
			"....",
			".##.",
			".#..",
		).SubImage(image.Rect(1, 1, 3, 3)), "█▀\n"},
		{"any color model: lit from half gray", func() image.Image {
			m := image.NewRGBA(image.Rect(0, 0, 3, 1))
			m.Set(0, 0, color.RGBA{0x80, 0x80, 0x80, 0xff})
			m.Set(1, 0, color.RGBA{0x7e, 0x7e, 0x7e, 0xff})
			m.Set(2, 0, color.White)
			return m
		}(), "▀ ▀\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Terminal(tt.img); got != tt.want {
				t.Errorf("Terminal() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTerminalFace(t *testing.T) {
	for _, e := range hal.Expressions() {
		got := TerminalFace(e)
		if want := Terminal(Draw(e, TerminalWidth, TerminalHeight)); got != want {
			t.Errorf("TerminalFace(%s) is not Terminal(Draw(%s, TerminalWidth, TerminalHeight))", e, e)
		}
		lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
		if len(lines) != TerminalHeight/2 || !strings.HasSuffix(got, "\n") {
			t.Errorf("TerminalFace(%s) has %d lines, want %d, each ending in a newline", e, len(lines), TerminalHeight/2)
		}
		for i, line := range lines {
			if n := utf8.RuneCountInString(line); n > TerminalWidth {
				t.Errorf("TerminalFace(%s) line %d is %d columns, want at most %d", e, i, n, TerminalWidth)
			}
			if strings.TrimRight(line, " ") != line {
				t.Errorf("TerminalFace(%s) line %d has trailing spaces", e, i)
			}
		}
	}
}
