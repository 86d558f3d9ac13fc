package faces

import (
	"image"
	"math"

	"github.com/devicectl/devicectl/hal"
)

// MaxSize is the largest width or height Draw renders; larger values are
// clamped to it, so a bad size cannot allocate without bound.
const MaxSize = 4096

// Draw returns the face showing e as a w x h monochrome image: features
// are 255 (lit), the background 0, as on an OLED. The face is centred and
// scaled to fit; it can be drawn at any size but is designed for 128x64,
// 128x32 and TerminalWidth x TerminalHeight.
//
// Sizes are clamped to 0..MaxSize; a zero size gives an empty image. An
// Expression that is not Valid gives a blank (all 0) image of the requested
// size: a display then goes dark rather than show a face that nobody asked
// for.
func Draw(e hal.Expression, w, h int) *image.Gray {
	w, h = min(max(w, 0), MaxSize), min(max(h, 0), MaxSize)
	img := image.NewGray(image.Rect(0, 0, w, h))
	if w == 0 || h == 0 {
		return img
	}
	if f, ok := expressions[e]; ok {
		rasterize(img, f(newLayout(w, h)))
	}
	return img
}

// The face is designed on a 128x64 grid (design units, "u"). Positions on
// the grid scale to the image independently in x and y, sizes (radii,
// widths, bends) scale by the smaller of the two, so a wide display spreads
// the eyes a little without stretching them into ovals.
const (
	designW, designH = 128, 64
	// maxAspect is how much wider than high the face may grow: beyond it
	// the eyes drift apart and the face stops reading as one face.
	maxAspect = 2.6

	eyeDX  = 30 // eye centre from the face's vertical centre line
	eyeY   = 26
	eyeR   = 13
	mouthY = 50
	lineW  = 4 // stroke width
)

// layout maps design units to pixels.
type layout struct {
	cx     float64 // the face's vertical centre line, px
	y0     float64 // top of the face box, px
	sx, sy float64 // px per u, for positions
	s      float64 // px per u, for sizes
	width  float64 // stroke width, px
	eyeD   float64 // the open eyes' diameter, whole px
	eyes   [2]point
	mouth  point
}

func newLayout(w, h int) layout {
	fw, fh := float64(w), float64(h)
	bw := min(fw, fh*maxAspect)
	bh := min(fh, fw*designH/designW)
	l := layout{cx: fw / 2, y0: (fh - bh) / 2, sx: bw / designW, sy: bh / designH}
	l.s = min(l.sx, l.sy)
	// Whole-pixel strokes, at least one: a stroke of 1.25 px covers one
	// row here and two there, and below one pixel it breaks into dots.
	l.width = max(math.Round(lineW*l.s), 1)

	// Hinting: put the centres of the eyes and the mouth where features of
	// their size cover whole pixels, so that small faces come out crisp
	// and both eyes the same. The eyes are placed as one offset from the
	// centre line, which keeps them mirror images.
	l.eyeD = max(math.Round(2*eyeR*l.s), 1)
	left := snap(l.cx-eyeDX*l.sx, l.eyeD)
	y := snap(l.y0+eyeY*l.sy, l.eyeD)
	l.eyes = [2]point{{left, y}, {2*l.cx - left, y}}
	l.mouth = point{l.cx, snap(l.y0+mouthY*l.sy, l.width)}
	return l
}

// snap moves v to the nearest position where a feature of the given whole
// pixel extent, centred on v, starts and ends on pixel edges: the centre
// of a pixel for an odd extent, an edge between pixels for an even one.
func snap(v, extent float64) float64 {
	if int(extent)%2 == 1 {
		return math.Floor(v) + 0.5
	}
	return math.Round(v)
}

// off returns p moved by (dx, dy) design units of size.
func (l layout) off(p point, dx, dy float64) point {
	return point{p.x + dx*l.s, p.y + dy*l.s}
}

// line is a stroke from p+(dx0,dy0) to p+(dx1,dy1), offsets in u.
// A horizontal line is snapped to whole pixel rows.
func (l layout) line(p point, dx0, dy0, dx1, dy1 float64) stroke {
	a, b := l.off(p, dx0, dy0), l.off(p, dx1, dy1)
	if dy0 == dy1 {
		a.y = snap(a.y, l.width)
		b.y = a.y
	}
	return stroke{[]point{a, b}, l.width}
}

// arc is a curve centred on p, halfW u either side, whose middle lies bend
// u below (positive: a U) or above (negative: an arch) its ends.
func (l layout) arc(p point, halfW, bend float64) stroke {
	return curve(l.off(p, -halfW, -bend/2), l.off(p, halfW, -bend/2), bend*l.s, l.width)
}

// fitDisc is a disc of about r u centred on p, a point snapped for
// features of extent px: its diameter is rounded to whole pixels of the
// same parity as extent, so that its edges fall on pixel edges too and it
// comes out round and symmetric rather than with a pixel sticking out at
// each side.
func (l layout) fitDisc(p point, r, extent float64) ellipse {
	want := 2 * r * l.s
	d := math.Round(want)
	if int(d)%2 != int(extent)%2 {
		if want > d {
			d++
		} else {
			d--
		}
	}
	d = max(d, 1)
	return ellipse{p.x, p.y, d / 2, d / 2}
}

// expressions holds how each expression looks.
var expressions = map[hal.Expression]func(l layout) []shape{
	hal.Idle:           idle,
	hal.Smile:          smile,
	hal.CloseEyesSmile: closeEyesSmile,
	hal.CloseEyes:      closeEyes,
	hal.Amazed:         amazed,
	hal.Cry:            cry,
}

// openEyes are two round filled eyes.
func openEyes(l layout) []shape {
	return []shape{l.fitDisc(l.eyes[0], eyeR, l.eyeD), l.fitDisc(l.eyes[1], eyeR, l.eyeD)}
}

// neutral is a short straight mouth.
func neutral(l layout) shape { return l.line(l.mouth, -12, 0, 12, 0) }

// grin is an upward curved mouth, a U.
func grin(l layout) shape { return l.arc(l.mouth, 18, 8) }

func idle(l layout) []shape {
	return append(openEyes(l), neutral(l))
}

func smile(l layout) []shape {
	return append(openEyes(l), grin(l))
}

// closeEyesSmile is ^ ^ with a smile: closed eyes drawn as arches.
func closeEyesSmile(l layout) []shape {
	var s []shape
	for _, e := range l.eyes {
		s = append(s, l.arc(l.off(e, 0, 2), 13, -12))
	}
	return append(s, grin(l))
}

// closeEyes is two flat lids, a little below the open eyes' centres as if
// closed over them, and a neutral mouth.
func closeEyes(l layout) []shape {
	var s []shape
	for _, e := range l.eyes {
		s = append(s, l.line(e, -13, 3, 13, 3))
	}
	return append(s, neutral(l))
}

// amazed is big ringed eyes with small pupils and an O mouth.
func amazed(l layout) []shape {
	var s []shape
	for _, e := range l.eyes {
		s = append(s, ring{l.fitDisc(e, 16, l.eyeD), l.width}, l.fitDisc(e, 5, l.eyeD))
	}
	return append(s, ring{l.fitDisc(l.mouth, 9, l.width), l.width})
}

// cry is sad eyes under brows raised at their inner ends, a tear under
// each eye's outer corner and a frown.
func cry(l layout) []shape {
	var s []shape
	for i, e := range l.eyes {
		out := float64(2*i - 1) // -1 for the left eye, +1 for the right: towards the outside
		// The top of the eye is cut along the brow's slant, lower outside.
		a, b := l.off(e, out*13, -2), l.off(e, -out*13, -9)
		if out > 0 {
			a, b = b, a // the cut keeps the side below a left-to-right line
		}
		s = append(s,
			clip{l.fitDisc(e, 11, l.eyeD), a, b},
			l.line(e, out*13, -11, -out*11, -18),
		)
		t := l.off(e, out*9, 23)
		s = append(s, drop{t.x, t.y, 4 * l.s})
	}
	return append(s, l.arc(l.off(l.mouth, 0, 1), 15, -8))
}
