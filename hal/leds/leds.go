package leds

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"

	"periph.io/x/conn/v3/display"
	"periph.io/x/conn/v3/physic"
	"periph.io/x/conn/v3/spi"
	"periph.io/x/devices/v3/apa102"
	"periph.io/x/devices/v3/nrzled"

	"github.com/devicectl/devicectl/hal"
)

// MaxPixels bounds the LED count: far more than a face needs, and a
// WS2812 strip of that length already outgrows spidev's default buffer.
const MaxPixels = 1024

// Options configure the constructors. The zero value is ready to use.
type Options struct {
	// Expression is shown when the face is opened. "" means hal.Idle.
	Expression hal.Expression
}

// Face is a hal.Face on a strip or ring of LEDs.
type Face struct {
	name       string
	d          display.Drawer
	n          int
	brightness int
	frames     hal.Frames
}

var _ hal.Face = (*Face)(nil)

// NewAPA102 opens a strip of pixels APA102 (or SK9822) LEDs on port at
// brightness percent (1..100), and shows the initial expression. opts may
// be nil.
func NewAPA102(port spi.Port, pixels, brightness int, opts *Options) (*Face, error) {
	if port == nil {
		return nil, errors.New("leds: APA102: no SPI port")
	}
	if err := checkCounts(pixels, brightness); err != nil {
		return nil, fmt.Errorf("leds: APA102 on SPI port %s: %w", port, err)
	}
	// Pass-through: the table's colours reach the LEDs unchanged, as on a
	// WS2812, instead of through periph's perceptual curve and colour
	// temperature correction; and without the 5-bit global PWM, whose
	// 580 Hz can be seen to flicker.
	d, err := apa102.New(port, &apa102.Opts{
		NumPixels:        pixels,
		Intensity:        255,
		Temperature:      apa102.NeutralTemp,
		DisableGlobalPWM: true,
	})
	if err != nil {
		return nil, fmt.Errorf("leds: APA102 on SPI port %s: %w", port, err)
	}
	return newFace("apa102:"+port.String(), d, brightness, opts)
}

// NewWS2812 opens a strip of pixels WS2812 (NeoPixel, WS2812B, SK6812 RGB)
// LEDs whose data line is port's MOSI, at brightness percent (1..100), and
// shows the initial expression. opts may be nil.
func NewWS2812(port spi.Port, pixels, brightness int, opts *Options) (*Face, error) {
	if port == nil {
		return nil, errors.New("leds: WS2812: no SPI port")
	}
	if err := checkCounts(pixels, brightness); err != nil {
		return nil, fmt.Errorf("leds: WS2812 on SPI port %s: %w", port, err)
	}
	// 2.5 MHz: each of the LEDs' 800 kHz bits is sent as 4 SPI bits (the
	// driver's only SPI rate).
	d, err := nrzled.NewSPI(port, &nrzled.Opts{NumPixels: pixels, Channels: 3, Freq: 2500 * physic.KiloHertz})
	if err != nil {
		return nil, fmt.Errorf("leds: WS2812 on SPI port %s: %w", port, err)
	}
	return newFace("ws2812:"+port.String(), d, brightness, opts)
}

// New returns a face on any strip periph can draw on, one LED per pixel of
// its first row, at brightness percent (1..100), and shows the initial
// expression. opts may be nil.
func New(d display.Drawer, brightness int, opts *Options) (*Face, error) {
	if d == nil {
		return nil, errors.New("leds: no strip")
	}
	return newFace("leds:"+d.String(), d, brightness, opts)
}

func newFace(name string, d display.Drawer, brightness int, opts *Options) (*Face, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Expression == "" {
		o.Expression = hal.Idle
	}
	if !o.Expression.Valid() {
		return nil, fmt.Errorf("%s: initial expression %q: %w", name, o.Expression, hal.ErrUnknownExpression)
	}
	f := &Face{name: name, d: d, n: d.Bounds().Dx(), brightness: brightness}
	if err := checkCounts(f.n, brightness); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := f.frames.Show(context.Background(), f, o.Expression, f.show); err != nil {
		return nil, err
	}
	return f, nil
}

// String returns e.g. "apa102:SPI0.0" or "ws2812:SPI0.0".
func (f *Face) String() string { return f.name }

// Halt turns every LED off. The face then reports hal.Idle; the next
// SetExpression lights it again.
func (f *Face) Halt() error {
	return f.frames.Halt(func() error {
		// Drawn black rather than left to the driver's Halt, so that any
		// Drawer goes dark, in the same frame format as every other frame.
		dark := make([]color.NRGBA, f.n)
		for i := range dark {
			dark[i].A = 255
		}
		if err := f.draw(dark); err != nil {
			return fmt.Errorf("%s: turning the LEDs off: %w", f, err)
		}
		return nil
	})
}

// SetExpression shows e's pattern; e must be Valid.
func (f *Face) SetExpression(ctx context.Context, e hal.Expression) error {
	return f.frames.Show(ctx, f, e, f.show)
}

// Expression returns the expression last shown.
func (f *Face) Expression(ctx context.Context) (hal.Expression, error) {
	return f.frames.Expression(ctx)
}

// show draws e's pattern.
func (f *Face) show(e hal.Expression) error {
	c, err := Pattern(e, f.n, f.brightness)
	if err == nil {
		err = f.draw(c)
	}
	if err != nil {
		return fmt.Errorf("%s: showing %s: %w", f, e, err)
	}
	return nil
}

// draw sends one whole frame: both drivers send the whole strip on every
// draw anyway, and a whole frame also repairs one that was garbled.
func (f *Face) draw(c []color.NRGBA) error {
	img := image.NewNRGBA(image.Rect(0, 0, len(c), 1))
	for i, v := range c {
		img.SetNRGBA(i, 0, v)
	}
	return f.d.Draw(f.d.Bounds(), img, image.Point{})
}
