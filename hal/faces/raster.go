package faces

import (
	"image"
	"math"
)

// A shape is a region of the plane in pixel coordinates (x right, y down,
// pixel (i, j) covering [i, i+1) x [j, j+1)).
type shape interface {
	// box returns a rectangle outside which the shape has no points.
	box() (x0, y0, x1, y1 float64)
	contains(x, y float64) bool
}

// ellipse is a filled ellipse.
type ellipse struct{ cx, cy, rx, ry float64 }

func (e ellipse) box() (float64, float64, float64, float64) {
	return e.cx - e.rx, e.cy - e.ry, e.cx + e.rx, e.cy + e.ry
}

func (e ellipse) contains(x, y float64) bool {
	if e.rx <= 0 || e.ry <= 0 {
		return false
	}
	dx, dy := (x-e.cx)/e.rx, (y-e.cy)/e.ry
	return dx*dx+dy*dy <= 1
}

// ring is an ellipse outline of the given stroke width, drawn inwards so
// that the ring keeps the outer size.
type ring struct {
	ellipse
	width float64
}

func (r ring) contains(x, y float64) bool {
	inner := ellipse{r.cx, r.cy, r.rx - r.width, r.ry - r.width}
	return r.ellipse.contains(x, y) && !inner.contains(x, y)
}

// stroke is a polyline of the given width with round caps and joins: the
// points within width/2 of one of its segments.
type stroke struct {
	pts   []point
	width float64
}

type point struct{ x, y float64 }

func (s stroke) box() (float64, float64, float64, float64) {
	x0, y0 := math.Inf(1), math.Inf(1)
	x1, y1 := math.Inf(-1), math.Inf(-1)
	for _, p := range s.pts {
		x0, y0 = min(x0, p.x), min(y0, p.y)
		x1, y1 = max(x1, p.x), max(y1, p.y)
	}
	r := s.width / 2
	return x0 - r, y0 - r, x1 + r, y1 + r
}

func (s stroke) contains(x, y float64) bool {
	r := s.width / 2
	r2 := r * r
	for i := 1; i < len(s.pts); i++ {
		a, b := s.pts[i-1], s.pts[i]
		// Cheap rejection: outside the segment's box grown by r.
		if x < min(a.x, b.x)-r || x > max(a.x, b.x)+r || y < min(a.y, b.y)-r || y > max(a.y, b.y)+r {
			continue
		}
		if dist2(point{x, y}, a, b) <= r2 {
			return true
		}
	}
	return len(s.pts) == 1 && dist2(point{x, y}, s.pts[0], s.pts[0]) <= r2
}

// dist2 is the squared distance from p to the segment ab.
func dist2(p, a, b point) float64 {
	dx, dy := b.x-a.x, b.y-a.y
	t := 0.0
	if l2 := dx*dx + dy*dy; l2 > 0 {
		t = min(max(((p.x-a.x)*dx+(p.y-a.y)*dy)/l2, 0), 1)
	}
	ex, ey := p.x-(a.x+t*dx), p.y-(a.y+t*dy)
	return ex*ex + ey*ey
}

// curve is a stroke along the quadratic Bézier curve from a to c that
// passes through the point half-way, offset by bend (positive: down) from
// the middle of ac. A positive bend draws a U, a negative one an arch.
func curve(a, c point, bend, width float64) stroke {
	// The curve's midpoint is (a+2k+c)/4, so for the midpoint to sit bend
	// below the chord's middle the control point k sits 2*bend below it.
	k := point{(a.x + c.x) / 2, (a.y+c.y)/2 + 2*bend}
	const n = 24
	pts := make([]point, n+1)
	for i := range pts {
		t := float64(i) / n
		u := 1 - t
		pts[i] = point{
			u*u*a.x + 2*u*t*k.x + t*t*c.x,
			u*u*a.y + 2*u*t*k.y + t*t*c.y,
		}
	}
	return stroke{pts, width}
}

// drop is a tear: a disc of radius r at (cx, cy) under a point 2.6 r above
// the disc's centre, its sides tangent to the disc.
type drop struct{ cx, cy, r float64 }

func (d drop) box() (float64, float64, float64, float64) {
	return d.cx - d.r, d.cy - 2.6*d.r, d.cx + d.r, d.cy + d.r
}

func (d drop) contains(x, y float64) bool {
	dx, dy := x-d.cx, y-d.cy
	if dx*dx+dy*dy <= d.r*d.r {
		return true
	}
	// The cone from the apex, h above the centre, whose sides touch the
	// disc: half-angle a with sin a = r/h.
	h := 2.6 * d.r
	up := -dy // height above the centre
	if up < 0 || up > h {
		return false
	}
	sin := d.r / h
	tan := sin / math.Sqrt(1-sin*sin)
	// The tangent points are at height r*sin above the centre; above them
	// the cone is the boundary.
	return up >= d.r*sin && math.Abs(dx) <= (h-up)*tan
}

// clip keeps the part of a shape on or below the line through a and b,
// a being left of b (screen coordinates: y grows downwards).
type clip struct {
	shape
	a, b point
}

func (c clip) contains(x, y float64) bool {
	cross := (c.b.x-c.a.x)*(y-c.a.y) - (c.b.y-c.a.y)*(x-c.a.x)
	return cross >= 0 && c.shape.contains(x, y)
}

// rasterize lights the pixels of img at least half covered by the union of
// the shapes, sampling each pixel on an n x n grid. Sampling the union (not
// each shape) keeps strokes that meet from leaving gaps.
func rasterize(img *image.Gray, shapes []shape) {
	type boxed struct {
		shape
		x0, y0, x1, y1 int // the pixels the shape may touch, clamped to img
	}
	b := img.Bounds()
	all := make([]boxed, 0, len(shapes))
	for _, s := range shapes {
		x0, y0, x1, y1 := s.box()
		bs := boxed{s,
			max(int(math.Floor(x0)), b.Min.X), max(int(math.Floor(y0)), b.Min.Y),
			min(int(math.Ceil(x1)), b.Max.X), min(int(math.Ceil(y1)), b.Max.Y),
		}
		if bs.x0 < bs.x1 && bs.y0 < bs.y1 {
			all = append(all, bs)
		}
	}
	// Only the shapes whose box holds a pixel are sampled for it.
	var row []boxed
	var here []shape
	for py := b.Min.Y; py < b.Max.Y; py++ {
		row = row[:0]
		x0, x1 := b.Max.X, b.Min.X
		for _, s := range all {
			if s.y0 <= py && py < s.y1 {
				row = append(row, s)
				x0, x1 = min(x0, s.x0), max(x1, s.x1)
			}
		}
		for px := x0; px < x1; px++ {
			here = here[:0]
			for _, s := range row {
				if s.x0 <= px && px < s.x1 {
					here = append(here, s.shape)
				}
			}
			if len(here) > 0 && covered(here, px, py) {
				img.Pix[img.PixOffset(px, py)] = 0xff
			}
		}
	}
}

// covered reports whether at least half of the samples of pixel (px, py),
// on an n x n grid, fall in one of the shapes. It stops as soon as the
// answer is known.
func covered(shapes []shape, px, py int) bool {
	const n = 4
	const need = (n*n + 1) / 2
	hits, misses := 0, 0
	for sy := range n {
		y := float64(py) + (float64(sy)+0.5)/n
		for sx := range n {
			x := float64(px) + (float64(sx)+0.5)/n
			in := false
			for _, s := range shapes {
				if s.contains(x, y) {
					in = true
					break
				}
			}
			if in {
				hits++
				if hits >= need {
					return true
				}
			} else {
				misses++
				if misses > n*n-need {
					return false
				}
			}
		}
	}
	return false
}
