package oled_test

import (
	"context"
	"errors"
	"fmt"
	"image"
	"strings"
	"testing"

	"periph.io/x/conn/v3/conntest"
	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/i2c/i2ctest"
	"periph.io/x/conn/v3/spi/spitest"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/faces"
	"github.com/devicectl/devicectl/hal/oled"
	"github.com/devicectl/devicectl/internal/testing/graydiff"
	"github.com/devicectl/devicectl/internal/testing/halconform"
)

var sizes = []oled.Size{oled.Size128x64, oled.Size128x32}

func blank(s oled.Size) *image.Gray { return image.NewGray(image.Rect(0, 0, s.W, s.H)) }

func draw(e hal.Expression, s oled.Size) *image.Gray { return faces.Draw(e, s.W, s.H) }

// TestI2CWireBytes checks every byte on the bus, built independently in
// wire_test.go: opening (init, page mode, the whole idle face), a partial
// redraw, Halt (blank, display off) and waking up again.
func TestI2CWireBytes(t *testing.T) {
	for _, s := range sizes {
		t.Run(s.String(), func(t *testing.T) {
			var xs []xfer
			xs = append(xs, initCmds(s, false)...)
			xs = append(xs, update(nil, draw(hal.Idle, s), false)...)
			xs = append(xs, update(draw(hal.Idle, s), draw(hal.Smile, s), false)...)
			xs = append(xs, update(draw(hal.Smile, s), blank(s), false)...)
			xs = append(xs, cmd(0xAE))
			xs = append(xs, update(blank(s), draw(hal.Cry, s), true)...)
			bus := &i2ctest.Playback{Ops: i2cOps(0x3C, xs), DontPanic: true}

			f, err := oled.NewI2C(bus, 0, s, nil)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if err := f.SetExpression(ctx, hal.Smile); err != nil {
				t.Fatal(err)
			}
			if err := f.Halt(); err != nil {
				t.Fatal(err)
			}
			if err := f.SetExpression(ctx, hal.Cry); err != nil {
				t.Fatal(err)
			}
			if err := bus.Close(); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestSPIWireBytes(t *testing.T) {
	for _, s := range sizes {
		t.Run(s.String(), func(t *testing.T) {
			var xs []xfer
			xs = append(xs, initCmds(s, true)...)
			xs = append(xs, update(nil, draw(hal.Amazed, s), false)...)
			xs = append(xs, update(draw(hal.Amazed, s), draw(hal.CloseEyes, s), false)...)
			port := &spitest.Playback{Playback: conntest.Playback{Ops: spiOps(xs), DontPanic: true}}

			f, err := oled.NewSPI(port, &dcPin{}, s, &oled.Options{Expression: hal.Amazed, Rotated: true})
			if err != nil {
				t.Fatal(err)
			}
			if err := f.SetExpression(context.Background(), hal.CloseEyes); err != nil {
				t.Fatal(err)
			}
			if err := port.Close(); err != nil {
				t.Error(err)
			}
		})
	}
}

// opener opens a Face on an emulated panel, over I2C or SPI.
type opener struct {
	name string
	open func(t *testing.T, p *panel, s oled.Size, o *oled.Options) hal.Face
}

var openers = []opener{
	{"i2c", func(t *testing.T, p *panel, s oled.Size, o *oled.Options) hal.Face {
		rec := &i2ctest.Record{Bus: &i2cPanel{panel: p, addr: 0x3C}}
		f, err := oled.NewI2C(rec, 0x3C, s, o)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}},
	{"spi", func(t *testing.T, p *panel, s oled.Size, o *oled.Options) hal.Face {
		dc := &dcPin{}
		rec := &spitest.Record{Port: &spiPanel{panel: p, dc: dc}}
		f, err := oled.NewSPI(rec, dc, s, o)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}},
}

// checkShown fails unless the panel's glass shows want, pixel for pixel.
func checkShown(t *testing.T, p *panel, want *image.Gray, what string) {
	t.Helper()
	got, err := p.shown()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if msg := graydiff.Diff(got, want); msg != "" {
		t.Fatalf("%s: %s", what, msg)
	}
}

// TestPanelShowsFacesPixels decodes what the bytes on the bus do to an
// SSD1306 and checks the glass against faces.Draw for every expression,
// reached from every expression (partial redraws), at both sizes, over
// both buses, upright and rotated.
func TestPanelShowsFacesPixels(t *testing.T) {
	ctx := context.Background()
	es := hal.Expressions()
	// Every ordered pair of expressions, each once, as consecutive sets.
	order := deBruijn(len(es))
	for _, op := range openers {
		for _, s := range sizes {
			for _, rotated := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/rotated=%t", op.name, s, rotated), func(t *testing.T) {
					t.Parallel()
					want := map[hal.Expression]*image.Gray{}
					for _, e := range es {
						want[e] = draw(e, s)
						if rotated {
							want[e] = rotate180(want[e])
						}
					}
					p := newPanel(s.W, s.H)
					f := op.open(t, p, s, &oled.Options{Rotated: rotated})
					checkShown(t, p, want[hal.Idle], "after opening")
					prev := hal.Idle
					for _, i := range order {
						e := es[i]
						if err := f.SetExpression(ctx, e); err != nil {
							t.Fatal(err)
						}
						checkShown(t, p, want[e], fmt.Sprintf("%s after %s", e, prev))
						prev = e
					}
				})
			}
		}
	}
}

// deBruijn returns a sequence of 0..k-1 in which every ordered pair, a
// digit after itself included, follows each other exactly once (a de
// Bruijn sequence of order 2, made linear).
func deBruijn(k int) []int {
	var seq []int
	a := make([]int, 3)
	var gen func(t, p int)
	gen = func(t, p int) {
		if t > 2 {
			if 2%p == 0 {
				seq = append(seq, a[1:p+1]...)
			}
			return
		}
		a[t] = a[t-p]
		gen(t+1, p)
		for j := a[t-p] + 1; j < k; j++ {
			a[t] = j
			gen(t+1, t)
		}
	}
	gen(1, 1)
	return append(seq, seq[0])
}

func TestDeBruijn(t *testing.T) {
	seq := deBruijn(6)
	seen := map[[2]int]int{}
	for i := 1; i < len(seq); i++ {
		seen[[2]int{seq[i-1], seq[i]}]++
	}
	if len(seq) != 37 || len(seen) != 36 {
		t.Errorf("deBruijn(6) = %v: %d long, %d pairs; want 37 and 36", seq, len(seq), len(seen))
	}
}

// TestPanelFollowsDatasheet shows that the emulator can tell a right
// command sequence from a wrong one: in horizontal addressing mode the
// page and column commands are ignored, so a partial redraw placed with
// them lands at the wrong place, which is why the face uses page mode.
func TestPanelFollowsDatasheet(t *testing.T) {
	s := oled.Size128x64
	run := func(mode byte) *panel {
		p := newPanel(s.W, s.H)
		xs := initCmds(s, false)[:1] // periph's init: horizontal mode
		xs = append(xs, cmd(0x20, mode))
		xs = append(xs, update(nil, draw(hal.Idle, s), false)...)
		xs = append(xs, update(draw(hal.Idle, s), draw(hal.Smile, s), false)...)
		for _, x := range xs {
			if x.data {
				_ = p.data(x.b)
			} else if err := p.command(x.b); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	checkShown(t, run(0x02), draw(hal.Smile, s), "page mode")
	got, err := run(0x00).shown()
	if err != nil {
		t.Fatal(err)
	}
	if graydiff.Diff(got, draw(hal.Smile, s)) == "" {
		t.Error("horizontal mode: a partial redraw placed with page commands showed the right picture; the emulator ignores the addressing mode")
	}
}

func TestInitialExpression(t *testing.T) {
	for _, op := range openers {
		p := newPanel(128, 32)
		f := op.open(t, p, oled.Size128x32, &oled.Options{Expression: hal.CloseEyesSmile})
		checkShown(t, p, draw(hal.CloseEyesSmile, oled.Size128x32), op.name)
		if got, err := f.Expression(context.Background()); err != nil || got != hal.CloseEyesSmile {
			t.Errorf("%s: Expression() = %q, %v; want %q", op.name, got, err, hal.CloseEyesSmile)
		}
	}
}

func TestHaltBlanksAndTurnsOff(t *testing.T) {
	ctx := context.Background()
	for _, op := range openers {
		t.Run(op.name, func(t *testing.T) {
			s := oled.Size128x64
			p := newPanel(s.W, s.H)
			f := op.open(t, p, s, &oled.Options{Expression: hal.Smile})
			for i := 0; i < 2; i++ { // Halt is idempotent
				if err := f.Halt(); err != nil {
					t.Fatalf("Halt #%d: %v", i+1, err)
				}
				if p.isOn() {
					t.Fatalf("Halt #%d: panel still on", i+1)
				}
				p.mu.Lock()
				p.on = true // peek at the memory: it must be blank
				p.mu.Unlock()
				checkShown(t, p, blank(s), "memory after Halt")
				p.mu.Lock()
				p.on = false
				p.mu.Unlock()
				if got, _ := f.Expression(ctx); got != hal.Idle {
					t.Errorf("after Halt: Expression() = %q, want idle", got)
				}
			}
			// Idle is what a halted face reports, and still shows when asked.
			if err := f.SetExpression(ctx, hal.Idle); err != nil {
				t.Fatal(err)
			}
			if !p.isOn() {
				t.Fatal("SetExpression after Halt left the panel off")
			}
			checkShown(t, p, draw(hal.Idle, s), "idle after Halt")
		})
	}
}

func TestRejectsUnknownExpressions(t *testing.T) {
	s := oled.Size128x32
	xs := append(initCmds(s, false), update(nil, draw(hal.Cry, s), false)...)
	bus := &i2ctest.Playback{Ops: i2cOps(0x3C, xs), DontPanic: true}
	f, err := oled.NewI2C(bus, 0, s, &oled.Options{Expression: hal.Cry})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []hal.Expression{"", "grin", "Smile", "smile ", "smile; touch x"} {
		if err := f.SetExpression(context.Background(), e); !errors.Is(err, hal.ErrUnknownExpression) {
			t.Errorf("SetExpression(%q) = %v, want hal.ErrUnknownExpression", e, err)
		} else if !strings.Contains(err.Error(), "ssd1306:playback/0x3c") {
			t.Errorf("SetExpression(%q) = %v: does not name the face", e, err)
		}
	}
	if got, _ := f.Expression(context.Background()); got != hal.Cry {
		t.Errorf("Expression() = %q, want cry", got)
	}
	if err := bus.Close(); err != nil { // nothing more reached the bus
		t.Error(err)
	}
}

func TestCancelledContext(t *testing.T) {
	s := oled.Size128x64
	bus := &i2ctest.Playback{Ops: i2cOps(0x3C, append(initCmds(s, false), update(nil, draw(hal.Idle, s), false)...)), DontPanic: true}
	f, err := oled.NewI2C(bus, 0, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	halconform.FaceCancelled(t, f)
	if err := bus.Close(); err != nil {
		t.Error(err)
	}
}

func TestMissingDisplay(t *testing.T) {
	tests := []struct {
		name    string
		bus     i2c.Bus
		addr    uint16
		want    []string
		wantErr error
	}{
		{"empty bus", &i2ctest.Playback{DontPanic: true}, 0, []string{"I2C bus playback", "address 0x3c"}, nil},
		{"other address", &i2cPanel{panel: newPanel(128, 64), addr: 0x3C}, 0x3D, []string{"I2C bus fake-i2c", "address 0x3d"}, errNACK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := oled.NewI2C(tt.bus, tt.addr, oled.Size128x64, nil)
			if err == nil {
				t.Fatalf("NewI2C = %v, nil; want an error", f)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("error %q does not wrap %q", err, tt.wantErr)
			}
		})
	}
}

// TestOtherAddress checks that a module strapped to 0x3D gets every byte,
// though periph's driver knows only 0x3C.
func TestOtherAddress(t *testing.T) {
	p := newPanel(128, 64)
	rec := &i2ctest.Record{Bus: &i2cPanel{panel: p, addr: 0x3D}}
	f, err := oled.NewI2C(rec, 0x3D, oled.Size128x64, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.SetExpression(context.Background(), hal.Amazed); err != nil {
		t.Fatal(err)
	}
	checkShown(t, p, draw(hal.Amazed, oled.Size128x64), "at 0x3d")
	if len(rec.Ops) == 0 {
		t.Fatal("nothing recorded")
	}
	for i, op := range rec.Ops {
		if op.Addr != 0x3D {
			t.Fatalf("transfer %d went to %#x, want 0x3d", i, op.Addr)
		}
	}
	if got, want := f.String(), "ssd1306:record/0x3d"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// TestRecoversAfterFailedTransfer drops one transfer in the middle of a
// frame: the panel then shows half of it while the driver believes it all
// sent. The next SetExpression, even of the same expression, must put the
// whole picture right.
func TestRecoversAfterFailedTransfer(t *testing.T) {
	ctx := context.Background()
	s := oled.Size128x64
	p := newPanel(s.W, s.H)
	bus := &i2cPanel{panel: p, addr: 0x3C}
	f, err := oled.NewI2C(bus, 0, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	bus.failAt = bus.count + 3 // the second page's placement
	err = f.SetExpression(ctx, hal.Amazed)
	if !errors.Is(err, errNACK) || !strings.Contains(err.Error(), "ssd1306:fake-i2c/0x3c") || !strings.Contains(err.Error(), "amazed") {
		t.Fatalf("SetExpression with a failing bus = %v; want an error naming the face and expression, wrapping the bus's", err)
	}
	if got, _ := f.Expression(ctx); got != hal.Idle {
		t.Errorf("after a failed draw: Expression() = %q, want idle (the last drawn in full)", got)
	}
	if err := f.SetExpression(ctx, hal.Amazed); err != nil {
		t.Fatal(err)
	}
	checkShown(t, p, draw(hal.Amazed, s), "after recovering")
}

func TestConstructorErrors(t *testing.T) {
	bus := func() i2c.Bus { return &i2cPanel{panel: newPanel(128, 64), addr: 0x3C} }
	tests := []struct {
		name    string
		open    func() (*oled.Face, error)
		wantErr error
	}{
		{"nil bus", func() (*oled.Face, error) { return oled.NewI2C(nil, 0, oled.Size128x64, nil) }, nil},
		{"10-bit address", func() (*oled.Face, error) { return oled.NewI2C(bus(), 0x3C0, oled.Size128x64, nil) }, nil},
		{"size", func() (*oled.Face, error) { return oled.NewI2C(bus(), 0, oled.Size{W: 64, H: 48}, nil) }, nil},
		{"expression", func() (*oled.Face, error) {
			return oled.NewI2C(bus(), 0, oled.Size128x64, &oled.Options{Expression: "grin"})
		}, hal.ErrUnknownExpression},
		{"nil port", func() (*oled.Face, error) { return oled.NewSPI(nil, &dcPin{}, oled.Size128x64, nil) }, nil},
		{"nil DC", func() (*oled.Face, error) {
			return oled.NewSPI(&spiPanel{panel: newPanel(128, 64)}, nil, oled.Size128x64, nil)
		}, nil},
		{"invalid DC", func() (*oled.Face, error) {
			return oled.NewSPI(&spiPanel{panel: newPanel(128, 64)}, gpio.INVALID, oled.Size128x64, nil)
		}, nil},
	}
	for _, tt := range tests {
		f, err := tt.open()
		if err == nil {
			t.Errorf("%s: got %v, want an error", tt.name, f)
		} else if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
			t.Errorf("%s: %v does not wrap %v", tt.name, err, tt.wantErr)
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]oled.Size{"128x64": oled.Size128x64, "128X32": oled.Size128x32, " 128x32 ": oled.Size128x32} {
		if got, err := oled.ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "128x48", "64x32", "128*64"} {
		if got, err := oled.ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %v, nil; want an error", in, got)
		}
	}
}

// TestConcurrentUse runs setters, readers and Halt at once (under -race),
// then checks the panel agrees with what the face reports.
func TestConcurrentUse(t *testing.T) {
	ctx := context.Background()
	p := newPanel(128, 32)
	f := openers[0].open(t, p, oled.Size128x32, nil)
	halconform.FaceConcurrently(t, f, 5, func() {
		if err := f.Halt(); err != nil {
			t.Error(err)
		}
	})
	// A last set, so that the face is not halted (a halted face is dark).
	if err := f.SetExpression(ctx, hal.Smile); err != nil {
		t.Fatal(err)
	}
	e, _ := f.Expression(ctx)
	checkShown(t, p, draw(e, oled.Size128x32), "after concurrent use")
}

func rotate180(img *image.Gray) *image.Gray {
	b := img.Bounds()
	out := image.NewGray(b)
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			out.SetGray(b.Dx()-1-x, b.Dy()-1-y, img.GrayAt(x, y))
		}
	}
	return out
}
