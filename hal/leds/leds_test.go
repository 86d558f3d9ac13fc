package leds_test

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"slices"
	"strings"
	"testing"

	"periph.io/x/conn/v3/conntest"
	"periph.io/x/conn/v3/display"
	"periph.io/x/conn/v3/display/displaytest"
	"periph.io/x/conn/v3/spi"
	"periph.io/x/conn/v3/spi/spitest"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/leds"
	"github.com/devicectl/devicectl/internal/testing/halconform"
)

// Frame encoders from the datasheets, independent of periph's drivers.

// apa102Frame is a start frame of 32 zero bits, per LED 0b111 and a 5-bit
// global brightness (31: full, as the face uses) then blue, green, red, and
// an end frame of ones, at least one clock edge per two LEDs (periph sends
// n/16+1 bytes).
func apa102Frame(c []color.NRGBA) []byte {
	out := []byte{0, 0, 0, 0}
	for _, v := range c {
		out = append(out, 0xE0|31, v.B, v.G, v.R)
	}
	for range len(c)/16 + 1 {
		out = append(out, 0xFF)
	}
	return out
}

// ws2812Frame sends each bit of green, red, blue, most significant first,
// as 4 SPI bits at 2.5 MHz: 1110 (high 1.2 µs) for a one and 1000 (high
// 0.4 µs) for a zero, between 3 zero bytes that keep the line low before
// the first bit and latch after the last.
func ws2812Frame(c []color.NRGBA) []byte {
	out := []byte{0, 0, 0}
	for _, v := range c {
		for _, ch := range []uint8{v.G, v.R, v.B} {
			var bits uint32
			for i := 7; i >= 0; i-- {
				sym := uint32(0b1000)
				if ch>>i&1 == 1 {
					sym = 0b1110
				}
				bits = bits<<4 | sym
			}
			out = append(out, byte(bits>>24), byte(bits>>16), byte(bits>>8), byte(bits))
		}
	}
	return append(out, 0, 0, 0)
}

func repeat(c color.NRGBA, n int) []color.NRGBA {
	out := make([]color.NRGBA, n)
	for i := range out {
		out[i] = c
	}
	return out
}

var black = color.NRGBA{A: 255}

func TestFrameEncoders(t *testing.T) {
	// Spot checks against the datasheets by hand, so the encoders above are
	// not only checked against the drivers they check.
	if got, want := apa102Frame([]color.NRGBA{{1, 2, 3, 255}}), []byte{0, 0, 0, 0, 0xFF, 3, 2, 1, 0xFF}; !slices.Equal(got, want) {
		t.Errorf("apa102Frame = % x, want % x", got, want)
	}
	want := []byte{0, 0, 0,
		0x88, 0x88, 0x88, 0x88, // green 0x00
		0xE8, 0x88, 0x88, 0x88, // red 0x80
		0xEE, 0xEE, 0xEE, 0xEE, // blue 0xFF
		0, 0, 0}
	if got := ws2812Frame([]color.NRGBA{{0x80, 0x00, 0xFF, 255}}); !slices.Equal(got, want) {
		t.Errorf("ws2812Frame = % x, want % x", got, want)
	}
}

func TestAPA102WireBytes(t *testing.T) {
	cry := []color.NRGBA{{0, 42, 153, 255}, black, black}
	port := &spitest.Playback{Playback: conntest.Playback{DontPanic: true, Ops: []conntest.IO{
		{W: apa102Frame(repeat(color.NRGBA{255, 170, 0, 255}, 3))}, // smile, on opening
		{W: apa102Frame(cry)},
		{W: apa102Frame(repeat(black, 3))}, // Halt
	}}}
	f, err := leds.NewAPA102(port, 3, 100, &leds.Options{Expression: hal.Smile})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.SetExpression(context.Background(), hal.Cry); err != nil {
		t.Fatal(err)
	}
	if err := f.Halt(); err != nil {
		t.Fatal(err)
	}
	if err := port.Close(); err != nil {
		t.Error(err)
	}
}

func TestWS2812WireBytes(t *testing.T) {
	port := &spitest.Playback{Playback: conntest.Playback{DontPanic: true, Ops: []conntest.IO{
		{W: ws2812Frame(repeat(color.NRGBA{128, 128, 128, 255}, 2))}, // amazed at 50%
		{W: ws2812Frame(repeat(color.NRGBA{32, 27, 21, 255}, 2))},    // idle: 25% of 50%
		{W: ws2812Frame(repeat(black, 2))},                           // Halt
	}}}
	f, err := leds.NewWS2812(port, 2, 50, &leds.Options{Expression: hal.Amazed})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.SetExpression(context.Background(), hal.Idle); err != nil {
		t.Fatal(err)
	}
	if err := f.Halt(); err != nil {
		t.Fatal(err)
	}
	if err := port.Close(); err != nil {
		t.Error(err)
	}
}

// drivers opens each kind of strip on a port.
var drivers = []struct {
	name   string
	open   func(p spi.Port, n, brightness int, o *leds.Options) (*leds.Face, error)
	encode func([]color.NRGBA) []byte
}{
	{"apa102", leds.NewAPA102, apa102Frame},
	{"ws2812", leds.NewWS2812, ws2812Frame},
}

// TestEveryExpressionOnTheWire records what each driver sends for every
// expression and checks it is the table's pattern, encoded per datasheet.
func TestEveryExpressionOnTheWire(t *testing.T) {
	for _, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			rec := &spitest.Record{}
			f, err := d.open(rec, 12, 40, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range hal.Expressions() {
				if err := f.SetExpression(context.Background(), e); err != nil {
					t.Fatal(err)
				}
				want, err := leds.Pattern(e, 12, 40)
				if err != nil {
					t.Fatal(err)
				}
				if got := rec.Ops[len(rec.Ops)-1].W; !slices.Equal(got, d.encode(want)) {
					t.Errorf("%s: sent % x\nwant % x", e, got, d.encode(want))
				}
				if got, _ := f.Expression(context.Background()); got != e {
					t.Errorf("Expression() = %q, want %q", got, e)
				}
			}
			if got, want := len(rec.Ops), 1+len(hal.Expressions()); got != want {
				t.Errorf("%d frames sent, want %d (one on opening, one per expression)", got, want)
			}
			if got, want := f.String(), d.name+":record"; got != want {
				t.Errorf("String() = %q, want %q", got, want)
			}
		})
	}
}

// TestNewOnAnyDrawer uses periph's fake Drawer, whose Halt does nothing:
// the LEDs must still go dark.
func TestNewOnAnyDrawer(t *testing.T) {
	ctx := context.Background()
	d := &displaytest.Drawer{Img: image.NewNRGBA(image.Rect(0, 0, 16, 1))}
	f, err := leds.New(d, 70, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkStrip(t, d, hal.Idle, 70)
	if err := f.SetExpression(ctx, hal.CloseEyesSmile); err != nil {
		t.Fatal(err)
	}
	checkStrip(t, d, hal.CloseEyesSmile, 70)
	for i := 0; i < 2; i++ { // Halt is idempotent
		if err := f.Halt(); err != nil {
			t.Fatal(err)
		}
		for x := 0; x < 16; x++ {
			if c := d.Img.NRGBAAt(x, 0); lit(c) {
				t.Fatalf("after Halt: LED %d = %v, want off", x, c)
			}
		}
		if got, _ := f.Expression(ctx); got != hal.Idle {
			t.Errorf("after Halt: Expression() = %q, want idle", got)
		}
	}
	if err := f.SetExpression(ctx, hal.Idle); err != nil {
		t.Fatal(err)
	}
	checkStrip(t, d, hal.Idle, 70)
}

func checkStrip(t *testing.T, d *displaytest.Drawer, e hal.Expression, brightness int) {
	t.Helper()
	want, err := leds.Pattern(e, d.Img.Rect.Dx(), brightness)
	if err != nil {
		t.Fatal(err)
	}
	for x, w := range want {
		if got := d.Img.NRGBAAt(x, 0); got != w {
			t.Fatalf("%s: LED %d = %v, want %v", e, x, got, w)
		}
	}
}

func TestRejectsUnknownExpressions(t *testing.T) {
	for _, d := range drivers {
		want, _ := leds.Pattern(hal.Cry, 4, 30)
		port := &spitest.Playback{Playback: conntest.Playback{DontPanic: true, Ops: []conntest.IO{{W: d.encode(want)}}}}
		f, err := d.open(port, 4, 30, &leds.Options{Expression: hal.Cry})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range []hal.Expression{"", "grin", "Cry", "smile; touch x"} {
			if err := f.SetExpression(context.Background(), e); !errors.Is(err, hal.ErrUnknownExpression) {
				t.Errorf("%s: SetExpression(%q) = %v, want hal.ErrUnknownExpression", d.name, e, err)
			} else if !strings.Contains(err.Error(), d.name+":playback") {
				t.Errorf("%s: SetExpression(%q) = %v: does not name the face", d.name, e, err)
			}
		}
		if got, _ := f.Expression(context.Background()); got != hal.Cry {
			t.Errorf("%s: Expression() = %q, want cry", d.name, got)
		}
		if err := port.Close(); err != nil { // nothing more was sent
			t.Errorf("%s: %v", d.name, err)
		}
	}
}

func TestCancelledContext(t *testing.T) {
	d := &displaytest.Drawer{Img: image.NewNRGBA(image.Rect(0, 0, 4, 1))}
	f, err := leds.New(d, 30, nil)
	if err != nil {
		t.Fatal(err)
	}
	halconform.FaceCancelled(t, f)
	checkStrip(t, d, hal.Idle, 30)
}

// failingDrawer is a strip whose transfers fail once armed.
type failingDrawer struct {
	displaytest.Drawer
	fail bool
}

var errWire = errors.New("spi: transfer failed")

func (d *failingDrawer) Draw(r image.Rectangle, src image.Image, sp image.Point) error {
	if d.fail {
		return errWire
	}
	return d.Drawer.Draw(r, src, sp)
}

func TestDrawErrors(t *testing.T) {
	d := &failingDrawer{Drawer: displaytest.Drawer{Img: image.NewNRGBA(image.Rect(0, 0, 4, 1))}}
	f, err := leds.New(d, 30, &leds.Options{Expression: hal.Smile})
	if err != nil {
		t.Fatal(err)
	}
	d.fail = true
	err = f.SetExpression(context.Background(), hal.Cry)
	if !errors.Is(err, errWire) || !strings.Contains(err.Error(), "leds:Drawer") || !strings.Contains(err.Error(), "cry") {
		t.Errorf("SetExpression with a failing strip = %v; want an error naming the face and expression, wrapping the bus's", err)
	}
	if got, _ := f.Expression(context.Background()); got != hal.Smile {
		t.Errorf("after a failed draw: Expression() = %q, want smile", got)
	}
	if err := f.Halt(); !errors.Is(err, errWire) {
		t.Errorf("Halt with a failing strip = %v, want %v", err, errWire)
	}
	if _, err := leds.New(d, 30, nil); !errors.Is(err, errWire) {
		t.Errorf("New on a failing strip = %v, want %v", err, errWire)
	}
}

func TestConstructorErrors(t *testing.T) {
	for _, d := range drivers {
		tests := []struct {
			name          string
			port          spi.Port
			n, brightness int
			opts          *leds.Options
			wantErr       error
		}{
			{"no LEDs", &spitest.Record{}, 0, 30, nil, hal.ErrOutOfRange},
			{"too many LEDs", &spitest.Record{}, leds.MaxPixels + 1, 30, nil, hal.ErrOutOfRange},
			{"dark", &spitest.Record{}, 12, 0, nil, hal.ErrOutOfRange},
			{"too bright", &spitest.Record{}, 12, 101, nil, hal.ErrOutOfRange},
			{"expression", &spitest.Record{}, 12, 30, &leds.Options{Expression: "grin"}, hal.ErrUnknownExpression},
			{"no port", nil, 12, 30, nil, nil},
		}
		for _, tt := range tests {
			f, err := d.open(tt.port, tt.n, tt.brightness, tt.opts)
			if err == nil {
				t.Errorf("%s/%s: got %v, want an error", d.name, tt.name, f)
			} else if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("%s/%s: %v does not wrap %v", d.name, tt.name, err, tt.wantErr)
			}
		}
	}
	var none display.Drawer
	if f, err := leds.New(none, 30, nil); err == nil {
		t.Errorf("New(nil) = %v, want an error", f)
	}
	empty := &displaytest.Drawer{Img: image.NewNRGBA(image.Rect(0, 0, 0, 1))}
	if _, err := leds.New(empty, 30, nil); !errors.Is(err, hal.ErrOutOfRange) {
		t.Errorf("New on a strip of no LEDs = %v, want hal.ErrOutOfRange", err)
	}
}

func TestConcurrentUse(t *testing.T) {
	ctx := context.Background()
	d := &displaytest.Drawer{Img: image.NewNRGBA(image.Rect(0, 0, 12, 1))}
	f, err := leds.New(d, 50, nil)
	if err != nil {
		t.Fatal(err)
	}
	halconform.FaceConcurrently(t, f, 5)
	e, _ := f.Expression(ctx)
	checkStrip(t, d, e, 50)
}

func ExamplePattern() {
	c, _ := leds.Pattern(hal.Cry, 6, 100)
	fmt.Println(c)
	// Output: [{0 42 153 255} {0 0 0 255} {0 0 0 255} {0 42 153 255} {0 0 0 255} {0 0 0 255}]
}
