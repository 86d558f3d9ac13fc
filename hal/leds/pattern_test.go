package leds_test

import (
	"errors"
	"image/color"
	"slices"
	"testing"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/leds"
)

// The documented table, checked by what each row promises.
var patternChecks = map[hal.Expression]func(t *testing.T, c []color.NRGBA){
	hal.Idle: func(t *testing.T, c []color.NRGBA) {
		for i, v := range c {
			if !lit(v) || v.B < v.R/2 || max(v.R, v.G, v.B) > 80 {
				t.Errorf("LED %d = %v, want a dim white", i, v)
			}
		}
	},
	hal.Smile: func(t *testing.T, c []color.NRGBA) {
		for i, v := range c {
			if v.R != 255 || v.G <= v.B || v.G >= v.R || v.B != 0 {
				t.Errorf("LED %d = %v, want a full warm yellow", i, v)
			}
		}
	},
	hal.CloseEyes: func(t *testing.T, c []color.NRGBA) {
		for i, v := range c {
			if !lit(v) || v.B <= v.G || v.G < v.R || v.B > 60 {
				t.Errorf("LED %d = %v, want a dim blue", i, v)
			}
		}
	},
	hal.CloseEyesSmile: func(t *testing.T, c []color.NRGBA) {
		if got := runs(c); got != 2 {
			t.Errorf("%d arcs lit, want 2: %v", got, c)
		}
		for i, v := range c {
			if lit(v) && (v.R <= v.G || v.G <= v.B || v.R > 100) {
				t.Errorf("LED %d = %v, want a dim warm colour", i, v)
			}
			if lit(v) != lit(c[len(c)-1-i]) {
				t.Errorf("LEDs %d and %d: the arcs are not mirror images", i, len(c)-1-i)
			}
		}
	},
	hal.Amazed: func(t *testing.T, c []color.NRGBA) {
		for i, v := range c {
			if v != (color.NRGBA{255, 255, 255, 255}) {
				t.Errorf("LED %d = %v, want full white", i, v)
			}
		}
	},
	hal.Cry: func(t *testing.T, c []color.NRGBA) {
		for i, v := range c {
			if lit(v) != (i%3 == 0) || lit(v) && (v.B <= v.G || v.R != 0) {
				t.Errorf("LED %d = %v, want blue on every third LED and dark between", i, v)
			}
		}
	},
}

func TestPatternTableCoversEveryExpression(t *testing.T) {
	for _, e := range hal.Expressions() {
		t.Run(string(e), func(t *testing.T) {
			check, ok := patternChecks[e]
			if !ok {
				t.Fatalf("no documented pattern for %s", e)
			}
			c, err := leds.Pattern(e, 12, 100)
			if err != nil {
				t.Fatal(err)
			}
			if len(c) != 12 {
				t.Fatalf("%d colours for 12 LEDs", len(c))
			}
			check(t, c)
		})
	}
}

func TestPatternsDiffer(t *testing.T) {
	es := hal.Expressions()
	for i, a := range es {
		for _, b := range es[i+1:] {
			pa, _ := leds.Pattern(a, 12, 30)
			pb, _ := leds.Pattern(b, 12, 30)
			if slices.Equal(pa, pb) {
				t.Errorf("%s and %s look the same", a, b)
			}
		}
	}
}

func TestPatternBrightness(t *testing.T) {
	tests := []struct {
		e          hal.Expression
		brightness int
		want       color.NRGBA
	}{
		{hal.Smile, 100, color.NRGBA{255, 170, 0, 255}},
		{hal.Smile, 50, color.NRGBA{128, 85, 0, 255}},
		{hal.Idle, 30, color.NRGBA{19, 16, 13, 255}},  // 25% of 30%
		{hal.Cry, 100, color.NRGBA{0, 42, 153, 255}},  // 60%
		{hal.Amazed, 1, color.NRGBA{3, 3, 3, 255}},    // 2.55 rounds up
		{hal.CloseEyes, 1, color.NRGBA{0, 0, 1, 255}}, // rounds to black: kept at 1
	}
	for _, tt := range tests {
		c, err := leds.Pattern(tt.e, 1, tt.brightness)
		if err != nil || c[0] != tt.want {
			t.Errorf("Pattern(%s, 1, %d) = %v, %v; want [%v]", tt.e, tt.brightness, c, err, tt.want)
		}
	}
}

// TestPatternShortStrips checks that a shape a strip is too short for
// still shows, and where the two arcs fall on common rings.
func TestPatternShortStrips(t *testing.T) {
	tests := []struct {
		n    int
		want []int // lit LEDs
	}{
		{1, []int{0}},
		{3, []int{0, 1, 2}},
		{8, []int{2, 5}},
		{12, []int{2, 3, 4, 7, 8, 9}},
		{16, []int{3, 4, 5, 10, 11, 12}},
	}
	for _, tt := range tests {
		c, err := leds.Pattern(hal.CloseEyesSmile, tt.n, 100)
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		for i, v := range c {
			if lit(v) {
				got = append(got, i)
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("close_eyes_smile on %d LEDs lights %v, want %v", tt.n, got, tt.want)
		}
	}
}

func TestPatternErrors(t *testing.T) {
	tests := []struct {
		e         hal.Expression
		n, bright int
		wantErr   error
	}{
		{"grin", 12, 30, hal.ErrUnknownExpression},
		{"", 12, 30, hal.ErrUnknownExpression},
		{hal.Idle, 0, 30, hal.ErrOutOfRange},
		{hal.Idle, leds.MaxPixels + 1, 30, hal.ErrOutOfRange},
		{hal.Idle, 12, 0, hal.ErrOutOfRange},
		{hal.Idle, 12, 101, hal.ErrOutOfRange},
	}
	for _, tt := range tests {
		if _, err := leds.Pattern(tt.e, tt.n, tt.bright); !errors.Is(err, tt.wantErr) {
			t.Errorf("Pattern(%q, %d, %d) = %v, want %v", tt.e, tt.n, tt.bright, err, tt.wantErr)
		}
	}
}

func lit(c color.NRGBA) bool { return c.R|c.G|c.B != 0 }

// runs counts the groups of consecutive lit LEDs around a ring.
func runs(c []color.NRGBA) int {
	n := 0
	for i, v := range c {
		if lit(v) && !lit(c[(i+len(c)-1)%len(c)]) {
			n++
		}
	}
	return n
}
