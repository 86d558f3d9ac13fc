package oled

import (
	"context"
	"errors"
	"fmt"
	"image"
	"strconv"
	"strings"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/physic"
	"periph.io/x/conn/v3/spi"
	"periph.io/x/devices/v3/ssd1306"
	"periph.io/x/devices/v3/ssd1306/image1bit"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/faces"
)

// DefaultAddress is the SSD1306's I2C address with SA0 low, which is how
// most modules come.
const DefaultAddress uint16 = 0x3C

// Size is a panel's resolution in pixels.
type Size struct{ W, H int }

// The panels a Face drives: the ones faces are designed and pinned for.
var (
	Size128x64 = Size{128, 64}
	Size128x32 = Size{128, 32}
)

func (s Size) String() string { return strconv.Itoa(s.W) + "x" + strconv.Itoa(s.H) }

// ParseSize parses "128x64" or "128x32".
func ParseSize(s string) (Size, error) {
	for _, z := range []Size{Size128x64, Size128x32} {
		if strings.EqualFold(strings.TrimSpace(s), z.String()) {
			return z, nil
		}
	}
	return Size{}, fmt.Errorf("oled: size %q: want 128x64 or 128x32", s)
}

func (s Size) check() error {
	if s != Size128x64 && s != Size128x32 {
		return fmt.Errorf("oled: size %s: want 128x64 or 128x32", s)
	}
	return nil
}

// Options configure NewI2C and NewSPI. The zero value is ready to use.
type Options struct {
	// Expression is shown when the face is opened. "" means hal.Idle.
	Expression hal.Expression
	// Rotated turns the picture by 180°, for a panel mounted upside down.
	Rotated bool
}

// Face is a hal.Face on an SSD1306.
type Face struct {
	name string
	size Size
	// open initialises the controller and returns periph's driver for it;
	// it is called again after a failed transfer.
	open func() (*ssd1306.Dev, error)

	frames hal.Frames
	dev    *ssd1306.Dev // nil: initialise the controller before drawing; used under frames
}

var _ hal.Face = (*Face)(nil)

// pageMode selects page addressing mode; see the package documentation for
// why.
var pageMode = []byte{0x20, 0x02}

// NewI2C opens the SSD1306 of the given size at addr on bus (0 means
// DefaultAddress), and shows the initial expression. opts may be nil.
func NewI2C(bus i2c.Bus, addr uint16, size Size, opts *Options) (*Face, error) {
	if bus == nil {
		return nil, errors.New("oled: no I2C bus")
	}
	if addr == 0 {
		addr = DefaultAddress
	}
	if addr > 0x7F {
		return nil, fmt.Errorf("oled: I2C address %#x: want a 7-bit address such as 0x3c or 0x3d", addr)
	}
	o, err := options(opts, size)
	if err != nil {
		return nil, err
	}
	panel := panelOpts(size, o.Rotated)
	at := &addrBus{Bus: bus, addr: addr}
	f := &Face{
		name: fmt.Sprintf("ssd1306:%s/%#x", bus, addr),
		size: size,
		open: func() (*ssd1306.Dev, error) {
			d, err := ssd1306.NewI2C(at, &panel)
			if err != nil {
				return nil, err
			}
			// 0x00 is the control byte that makes the rest commands.
			if err := at.Tx(0, append([]byte{0x00}, pageMode...), nil); err != nil {
				return nil, err
			}
			return d, nil
		},
	}
	if err := f.start(o.Expression); err != nil {
		return nil, fmt.Errorf("oled: no working SSD1306 on I2C bus %s at address %#x (is it wired and powered, and is that its address?): %w", bus, addr, err)
	}
	return f, nil
}

// NewSPI opens the SSD1306 of the given size on port, with dc as its
// data/command pin, and shows the initial expression. opts may be nil.
//
// The face connects to port once and keeps the connection.
func NewSPI(port spi.Port, dc gpio.PinOut, size Size, opts *Options) (*Face, error) {
	if port == nil {
		return nil, errors.New("oled: no SPI port")
	}
	if dc == nil || dc == gpio.INVALID {
		return nil, errors.New("oled: SPI needs the display's DC pin (3-wire SPI is not supported)")
	}
	o, err := options(opts, size)
	if err != nil {
		return nil, err
	}
	panel := panelOpts(size, o.Rotated)
	p := &oncePort{Port: port}
	f := &Face{
		name: fmt.Sprintf("ssd1306:%s", port),
		size: size,
		open: func() (*ssd1306.Dev, error) {
			d, err := ssd1306.NewSPI(p, dc, &panel)
			if err != nil {
				return nil, err
			}
			if err := dc.Out(gpio.Low); err != nil { // low: command
				return nil, fmt.Errorf("setting DC pin %s: %w", dc, err)
			}
			if err := p.conn.Tx(pageMode, nil); err != nil {
				return nil, err
			}
			return d, nil
		},
	}
	if err := f.start(o.Expression); err != nil {
		return nil, fmt.Errorf("oled: SSD1306 on SPI port %s with DC pin %s: %w", port, dc, err)
	}
	return f, nil
}

func options(opts *Options, size Size) (Options, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Expression == "" {
		o.Expression = hal.Idle
	}
	if !o.Expression.Valid() {
		return o, fmt.Errorf("oled: initial expression %q: %w", o.Expression, hal.ErrUnknownExpression)
	}
	return o, size.check()
}

// panelOpts configures periph's driver for the common modules: the 128x64
// ones wire the controller's COM pins alternately and the 128x32 ones
// sequentially; the wrong choice shows every other row.
func panelOpts(size Size, rotated bool) ssd1306.Opts {
	return ssd1306.Opts{
		W:                size.W,
		H:                size.H,
		Sequential:       size.H == 32,
		MirrorVertical:   rotated,
		MirrorHorizontal: rotated,
	}
}

// start initialises the controller and shows e, which is Valid.
func (f *Face) start(e hal.Expression) error {
	return f.frames.Show(context.Background(), f, e, func(e hal.Expression) error {
		return f.show(faces.Draw(e, f.size.W, f.size.H))
	})
}

// String returns e.g. "ssd1306:I2C1/0x3c" or "ssd1306:SPI0.0".
func (f *Face) String() string { return f.name }

// Halt blanks the panel and turns it off. The face then reports hal.Idle;
// the next SetExpression turns the panel on again.
func (f *Face) Halt() error {
	return f.frames.Halt(func() error {
		// Blank memory, not just a dark panel: periph's driver skips a frame
		// equal to the last one, so without it showing the same expression
		// again would send nothing and leave the panel off; and whatever turns
		// the panel on by other means shows nothing rather than a stale face.
		if err := f.show(image.NewGray(image.Rect(0, 0, f.size.W, f.size.H))); err != nil {
			return fmt.Errorf("%s: blanking: %w", f, err)
		}
		if err := f.dev.Halt(); err != nil {
			f.dev = nil
			return fmt.Errorf("%s: turning the panel off: %w", f, err)
		}
		return nil
	})
}

// SetExpression draws e, which must be Valid.
func (f *Face) SetExpression(ctx context.Context, e hal.Expression) error {
	return f.frames.Show(ctx, f, e, func(e hal.Expression) error {
		if err := f.show(faces.Draw(e, f.size.W, f.size.H)); err != nil {
			return fmt.Errorf("%s: drawing %s: %w", f, e, err)
		}
		return nil
	})
}

// Expression returns the expression last drawn in full.
func (f *Face) Expression(ctx context.Context) (hal.Expression, error) {
	return f.frames.Expression(ctx)
}

// show sends img to the panel, initialising the controller first if need
// be. It runs as one of frames' frames.
func (f *Face) show(img *image.Gray) error {
	if f.dev == nil {
		d, err := f.open()
		if err != nil {
			return fmt.Errorf("initialising the controller: %w", err)
		}
		f.dev = d
	}
	if err := f.dev.Draw(f.dev.Bounds(), toBits(img), image.Point{}); err != nil {
		f.dev = nil
		return err
	}
	return nil
}

// toBits converts img to the controller's memory layout. Doing it here,
// rather than leaving it to the driver, puts the lit/dark threshold next to
// faces' definition (255 lit, 0 dark) and takes the driver's copy-free path.
func toBits(img *image.Gray) *image1bit.VerticalLSB {
	b := img.Bounds()
	out := image1bit.NewVerticalLSB(b)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			out.SetBit(x, y, img.GrayAt(x, y).Y >= 0x80)
		}
	}
	return out
}

// addrBus sends every transfer to addr: ssd1306.NewI2C always talks to
// 0x3C, and a module strapped to 0x3D must work too.
type addrBus struct {
	i2c.Bus
	addr uint16
}

func (b *addrBus) Tx(_ uint16, w, r []byte) error { return b.Bus.Tx(b.addr, w, r) }

// oncePort connects once and hands the same connection out again: spidev
// allows a single Connect per port, and the face opens the driver anew
// after a failed transfer. It also keeps the connection for the command
// periph's driver has no method for.
type oncePort struct {
	spi.Port
	conn spi.Conn
}

func (p *oncePort) Connect(f physic.Frequency, mode spi.Mode, bits int) (spi.Conn, error) {
	if p.conn == nil {
		c, err := p.Port.Connect(f, mode, bits)
		if err != nil {
			return nil, err
		}
		p.conn = c
	}
	return p.conn, nil
}
