package faces

import (
	"image"
	"image/color"
	"strings"

	"github.com/devicectl/devicectl/hal"
)

// The size TerminalFace draws at: 10 lines of 40 columns. At this size
// strokes are one pixel wide and the eyes eight across; at 32x16 rings and
// tears break up, and from 48x24 two-pixel strokes look heavy.
const (
	TerminalWidth  = 40
	TerminalHeight = 20
)

// Terminal renders img with Unicode half blocks, two pixel rows per line:
// a pixel is lit when its gray level is at least half. Each line ends with
// "\n" and has no trailing spaces (so a line with nothing lit is empty);
// an odd last row is paired with an unlit one.
func Terminal(img image.Image) string {
	b := img.Bounds()
	gray, _ := img.(*image.Gray) // the common case, without a conversion per pixel
	lit := func(x, y int) bool {
		switch {
		case y >= b.Max.Y:
			return false
		case gray != nil:
			return gray.GrayAt(x, y).Y >= 0x80
		}
		return color.GrayModel.Convert(img.At(x, y)).(color.Gray).Y >= 0x80
	}
	var sb strings.Builder
	line := make([]rune, 0, b.Dx())
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		line = line[:0]
		for x := b.Min.X; x < b.Max.X; x++ {
			line = append(line, cell(lit(x, y), lit(x, y+1)))
		}
		sb.WriteString(strings.TrimRight(string(line), " "))
		sb.WriteByte('\n')
	}
	return sb.String()
}

func cell(top, bottom bool) rune {
	switch {
	case top && bottom:
		return '█'
	case top:
		return '▀'
	case bottom:
		return '▄'
	}
	return ' '
}

// TerminalFace renders e at TerminalWidth x TerminalHeight for a terminal.
func TerminalFace(e hal.Expression) string {
	return Terminal(Draw(e, TerminalWidth, TerminalHeight))
}
