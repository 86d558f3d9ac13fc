package leds

import (
	"fmt"
	"image/color"

	"github.com/devicectl/devicectl/hal"
)

// pattern is how an expression looks on a strip or ring.
type pattern struct {
	color color.NRGBA // at full brightness
	level int         // percent of the configured brightness
	// lit reports whether LED i of n shows the colour; nil lights them all.
	lit func(i, n int) bool
}

// patterns is the one table both drivers show; the package documentation
// repeats it.
var patterns = map[hal.Expression]pattern{
	hal.Idle:           {color.NRGBA{255, 214, 170, 255}, 25, nil},     // soft warm white, dim
	hal.Smile:          {color.NRGBA{255, 170, 0, 255}, 100, nil},      // warm yellow
	hal.CloseEyes:      {color.NRGBA{30, 60, 255, 255}, 15, nil},       // dim blue, asleep
	hal.CloseEyesSmile: {color.NRGBA{255, 120, 20, 255}, 35, twoArcs},  // warm and dim, two arcs
	hal.Amazed:         {color.NRGBA{255, 255, 255, 255}, 100, nil},    // bright white
	hal.Cry:            {color.NRGBA{0, 70, 255, 255}, 60, everyThird}, // blue drops
}

// twoArcs lights the LEDs whose centres lie in [1/5, 2/5) or [3/5, 4/5)
// of the way along: with LED 0 at the bottom of a ring, two arcs at about
// ten and two o'clock with a gap at the top, like closed smiling eyes.
func twoArcs(i, n int) bool {
	c := 20 * (2*i + 1) // 40 n times the centre's position along
	return c >= 8*n && c < 16*n || c >= 24*n && c < 32*n
}

// everyThird lights every third LED from the first, like falling drops.
func everyThird(i, n int) bool { return i%3 == 0 }

// Pattern returns the colours n LEDs show for e at brightness percent
// (1..100), LED 0 first. Every channel is the table's full colour scaled
// linearly by the expression's level and the brightness. An expression
// that is not Valid is an error wrapping hal.ErrUnknownExpression; n or
// brightness out of range one wrapping hal.ErrOutOfRange.
func Pattern(e hal.Expression, n, brightness int) ([]color.NRGBA, error) {
	p, ok := patterns[e]
	if !ok {
		return nil, fmt.Errorf("leds: expression %q: %w", e, hal.ErrUnknownExpression)
	}
	if err := checkCounts(n, brightness); err != nil {
		return nil, fmt.Errorf("leds: %w", err)
	}
	scale := func(v uint8) uint8 {
		return uint8((int(v)*p.level*brightness + 5000) / 10000)
	}
	on := color.NRGBA{scale(p.color.R), scale(p.color.G), scale(p.color.B), 255}
	// At the lowest brightness a dim pattern would round to black, which
	// looks like a halted face: keep its strongest channel at 1.
	if on.R|on.G|on.B == 0 {
		top := max(p.color.R, p.color.G, p.color.B)
		one := func(v uint8) uint8 {
			if v == top {
				return 1
			}
			return 0
		}
		on = color.NRGBA{one(p.color.R), one(p.color.G), one(p.color.B), 255}
	}
	out := make([]color.NRGBA, n)
	lit := 0
	for i := range out {
		out[i] = color.NRGBA{A: 255}
		if p.lit == nil || p.lit(i, n) {
			out[i] = on
			lit++
		}
	}
	// A strip too short for the shape (two arcs on one LED) shows the
	// colour on every LED rather than nothing.
	if lit == 0 {
		for i := range out {
			out[i] = on
		}
	}
	return out, nil
}

func checkCounts(n, brightness int) error {
	if n < 1 || n > MaxPixels {
		return fmt.Errorf("%d LEDs: want 1..%d: %w", n, MaxPixels, hal.ErrOutOfRange)
	}
	if brightness < 1 || brightness > 100 {
		return fmt.Errorf("brightness %d%%: want 1..100: %w", brightness, hal.ErrOutOfRange)
	}
	return nil
}
