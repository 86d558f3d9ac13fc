package faces

import (
	"fmt"
	"image"
	"math"
	"testing"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/internal/testing/graydiff"
)

// Sizes the faces are designed for, and a few others they must survive.
var (
	designSizes = [][2]int{{128, 64}, {128, 32}, {TerminalWidth, TerminalHeight}}
	otherSizes  = [][2]int{{64, 64}, {256, 64}, {96, 48}, {33, 17}, {320, 240}}
)

func TestDrawMonochromeAndSymmetric(t *testing.T) {
	for _, sz := range append(designSizes, otherSizes...) {
		for _, e := range hal.Expressions() {
			img := Draw(e, sz[0], sz[1])
			if got, want := img.Bounds(), image.Rect(0, 0, sz[0], sz[1]); got != want {
				t.Fatalf("Draw(%s, %d, %d).Bounds() = %v, want %v", e, sz[0], sz[1], got, want)
			}
			lit := 0
			for _, p := range img.Pix {
				switch p {
				case 0xff:
					lit++
				case 0:
				default:
					t.Fatalf("Draw(%s, %d, %d) has a pixel of gray %d, want only 0 and 255", e, sz[0], sz[1], p)
				}
			}
			if lit == 0 {
				t.Errorf("Draw(%s, %d, %d) is blank", e, sz[0], sz[1])
			}
			// Every expression is designed left-right symmetric; hinting
			// must not break that.
			w := img.Bounds().Dx()
			for y := range img.Bounds().Dy() {
				for x := range w / 2 {
					if img.GrayAt(x, y) != img.GrayAt(w-1-x, y) {
						t.Errorf("Draw(%s, %d, %d) is not mirror-symmetric: (%d,%d) and (%d,%d) differ",
							e, sz[0], sz[1], x, y, w-1-x, y)
						break
					}
				}
			}
		}
	}
}

// TestExpressionsDiffer checks that no two expressions draw the same at
// the sizes it matters, and no two differ by only a few pixels.
func TestExpressionsDiffer(t *testing.T) {
	for _, sz := range designSizes {
		exprs := hal.Expressions()
		for i, a := range exprs {
			for _, b := range exprs[i+1:] {
				ia, ib := Draw(a, sz[0], sz[1]), Draw(b, sz[0], sz[1])
				n := 0
				for k := range ia.Pix {
					if ia.Pix[k] != ib.Pix[k] {
						n++
					}
				}
				// At least one stroke's worth of the mouth's length.
				if least := sz[0] / 8; n < least {
					t.Errorf("%s and %s differ in %d pixels at %dx%d, want at least %d", a, b, n, sz[0], sz[1], least)
				}
			}
		}
	}
	seen := map[string]hal.Expression{}
	for _, e := range hal.Expressions() {
		s := TerminalFace(e)
		if prev, ok := seen[s]; ok {
			t.Errorf("TerminalFace(%s) == TerminalFace(%s)", e, prev)
		}
		seen[s] = e
	}
}

func TestDrawDeterministic(t *testing.T) {
	for _, e := range hal.Expressions() {
		a, b := Draw(e, 128, 64), Draw(e, 128, 64)
		if msg := graydiff.Diff(a, b); msg != "" {
			t.Errorf("two Draw(%s, 128, 64) differ: %s", e, msg)
		}
		a.Pix[0] ^= 0xff // the result is the caller's own
		if c := Draw(e, 128, 64); c.Pix[0] == a.Pix[0] {
			t.Errorf("Draw(%s) shares pixels between calls", e)
		}
	}
}

func TestDrawSizes(t *testing.T) {
	tests := []struct {
		w, h int
		want image.Rectangle
	}{
		{0, 0, image.Rect(0, 0, 0, 0)},
		{0, 64, image.Rect(0, 0, 0, 64)},
		{128, 0, image.Rect(0, 0, 128, 0)},
		{-1, 64, image.Rect(0, 0, 0, 64)},
		{128, -5, image.Rect(0, 0, 128, 0)},
		{-1 << 31, -1 << 31, image.Rect(0, 0, 0, 0)},
		{1, 1, image.Rect(0, 0, 1, 1)},
		{2, 1, image.Rect(0, 0, 2, 1)},
		{1, 2, image.Rect(0, 0, 1, 2)},
		{3, 3, image.Rect(0, 0, 3, 3)},
		{7, 5, image.Rect(0, 0, 7, 5)},
		{1000, 1, image.Rect(0, 0, 1000, 1)},
		{1, 1000, image.Rect(0, 0, 1, 1000)},
		{MaxSize + 1, 8, image.Rect(0, 0, MaxSize, 8)},
		{8, math.MaxInt, image.Rect(0, 0, 8, MaxSize)},
	}
	for _, tt := range tests {
		for _, e := range append(hal.Expressions(), "unknown") {
			t.Run(fmt.Sprintf("%s/%dx%d", e, tt.w, tt.h), func(t *testing.T) {
				img := Draw(e, tt.w, tt.h)
				if img.Bounds() != tt.want {
					t.Errorf("Bounds() = %v, want %v", img.Bounds(), tt.want)
				}
				if len(img.Pix) != tt.want.Dx()*tt.want.Dy() {
					t.Errorf("len(Pix) = %d, want %d", len(img.Pix), tt.want.Dx()*tt.want.Dy())
				}
			})
		}
	}
}

func TestDrawUnknownIsBlank(t *testing.T) {
	for _, e := range []hal.Expression{"", "happy", "Idle", "idle "} {
		img := Draw(e, 128, 64)
		if img.Bounds() != image.Rect(0, 0, 128, 64) {
			t.Errorf("Draw(%q).Bounds() = %v, want the requested 128x64", e, img.Bounds())
		}
		for i, p := range img.Pix {
			if p != 0 {
				t.Errorf("Draw(%q) lights pixel %d, want a blank image", e, i)
				break
			}
		}
	}
}

// TestReadsAs checks the meaning of each face at each design size, so a
// tweak cannot quietly turn a smile into a frown or open a closed eye: the
// eyes are open or closed, the mouth flat, a U, an arch, or an O.
func TestReadsAs(t *testing.T) {
	want := map[hal.Expression][2]string{
		hal.Idle:           {"open", "flat"},
		hal.Smile:          {"open", "U"},
		hal.CloseEyesSmile: {"closed", "U"},
		hal.CloseEyes:      {"closed", "flat"},
		hal.Amazed:         {"open", "O"},
		hal.Cry:            {"open", "arch"},
	}
	for _, sz := range designSizes {
		for _, e := range hal.Expressions() {
			img := Draw(e, sz[0], sz[1])
			l := newLayout(sz[0], sz[1])
			eyes, mouth := eyesState(img, l), mouthShape(img, l)
			if w := want[e]; eyes != w[0] || mouth != w[1] {
				t.Errorf("%s at %dx%d reads as eyes %s, mouth %s; want eyes %s, mouth %s\n%s",
					e, sz[0], sz[1], eyes, mouth, w[0], w[1], Terminal(img))
			}
		}
	}
}

// eyesState says "open" if a column of the left eye's region has a lit run
// taller than three strokes (a lid or an arch never does), else "closed".
func eyesState(img *image.Gray, l layout) string {
	e := l.eyes[0]
	r := 16 * l.s
	for x := int(e.x - r); x < int(e.x+r); x++ {
		run := 0
		for y := int(e.y - r); y < int(e.y+r); y++ {
			if img.GrayAt(x, y).Y != 0 {
				run++
				if float64(run) > 3*l.width {
					return "open"
				}
			} else {
				run = 0
			}
		}
	}
	return "closed"
}

// mouthShape looks at the columns of the mouth's region: "O" if the middle
// column is lit in two separate runs, otherwise it compares the centre of
// the lit pixels of the middle column with that of the outermost lit
// column (centres, not tops, so that round caps read as flat).
func mouthShape(img *image.Gray, l layout) string {
	half := int(20 * l.sx)
	top := int(l.mouth.y - 12*l.s)
	bottom := img.Bounds().Dy()
	cx := int(l.cx)
	column := func(x int) (centre float64, runs int) {
		sum, n, prev := 0, 0, false
		for y := top; y < bottom; y++ {
			on := img.GrayAt(x, y).Y != 0
			if on {
				sum += y
				n++
				if !prev {
					runs++
				}
			}
			prev = on
		}
		if n == 0 {
			return -1, 0
		}
		return float64(sum) / float64(n), runs
	}
	mid, runs := column(cx)
	if runs >= 2 {
		return "O"
	}
	end := -1.0
	for x := cx - half; x < cx; x++ {
		if c, _ := column(x); c >= 0 {
			end = c
			break
		}
	}
	switch {
	case mid < 0 || end < 0:
		return "none"
	case mid > end+0.5:
		return "U"
	case mid < end-0.5:
		return "arch"
	}
	return "flat"
}

func BenchmarkDraw(b *testing.B) {
	for _, sz := range [][2]int{{128, 64}, {TerminalWidth, TerminalHeight}} {
		b.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(b *testing.B) {
			for b.Loop() {
				Draw(hal.Cry, sz[0], sz[1])
			}
		})
	}
}
