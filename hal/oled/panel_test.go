package oled_test

import (
	"errors"
	"fmt"
	"image"
	"sync"

	"periph.io/x/conn/v3"
	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/physic"
	"periph.io/x/conn/v3/pin"
	"periph.io/x/conn/v3/spi"
)

// panel emulates an SSD1306 and its glass as the datasheet (rev 1.1)
// describes them, independently of periph's driver: it interprets the
// command and data streams, including the three addressing modes, and says
// which pixels the glass shows. It is what lets the tests check that the
// bytes on the bus make the picture faces.Draw made, whatever sequence of
// commands produced them.
type panel struct {
	mu sync.Mutex

	w, h int // the glass; the controller always has 128x64 bits of memory
	ram  [8][128]byte

	on, chargePump, allOn, inverse, scrolling bool
	segRemap, comReverse                      bool
	mux, offset, startLine                    int
	comPins                                   byte

	mode                 byte // 0 horizontal, 1 vertical, 2 page
	col, page            int
	colStart, colEnd     int
	pageStart, pageEnd   int
	pending              []byte // a command waiting for its parameters
	commands, dataWrites int
}

// newPanel returns a panel in its reset state, its memory full of noise as
// after power-up.
func newPanel(w, h int) *panel {
	p := &panel{w: w, h: h, mode: 2, colEnd: 127, pageEnd: 7, mux: 63, comPins: 0x12}
	for i := range p.ram {
		for j := range p.ram[i] {
			p.ram[i][j] = byte(i*131 + j*37 + 11)
		}
	}
	return p
}

// paramCount is how many parameter bytes follow each multi-byte command.
var paramCount = map[byte]int{
	0x20: 1, 0x21: 2, 0x22: 2, // addressing
	0x26: 6, 0x27: 6, 0x29: 5, 0x2A: 5, 0xA3: 2, // scrolling
	0x81: 1, 0x8D: 1, 0xA8: 1, 0xD3: 1, 0xD5: 1, 0xD9: 1, 0xDA: 1, 0xDB: 1,
}

func (p *panel) command(b []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range b {
		p.pending = append(p.pending, c)
		if len(p.pending) <= paramCount[p.pending[0]] {
			continue
		}
		cmd := p.pending
		p.pending = nil
		p.commands++
		if err := p.exec(cmd); err != nil {
			return err
		}
	}
	return nil
}

func (p *panel) exec(cmd []byte) error {
	c := cmd[0]
	switch {
	case c <= 0x0F: // lower column start, page mode only
		if p.mode == 2 {
			p.col = p.col&0x70 | int(c)
		}
	case c <= 0x1F: // higher column start, page mode only
		if p.mode == 2 {
			p.col = int(c&0x07)<<4 | p.col&0x0F
		}
	case c == 0x20:
		if cmd[1]&3 == 3 {
			return fmt.Errorf("panel: invalid addressing mode %#x", cmd[1])
		}
		p.mode = cmd[1] & 3
	case c == 0x21:
		p.colStart, p.colEnd = int(cmd[1]&0x7F), int(cmd[2]&0x7F)
		p.col = p.colStart
	case c == 0x22:
		p.pageStart, p.pageEnd = int(cmd[1]&7), int(cmd[2]&7)
		p.page = p.pageStart
	case c == 0x26, c == 0x27, c == 0x29, c == 0x2A, c == 0xA3:
		// Scroll set-up: the effect is in 0x2F.
	case c == 0x2E:
		p.scrolling = false
	case c == 0x2F:
		p.scrolling = true
	case c >= 0x40 && c <= 0x7F:
		p.startLine = int(c - 0x40)
	case c == 0x81, c == 0xD5, c == 0xD9, c == 0xDB:
		// Contrast, clock, pre-charge, VCOMH: no effect on which pixels light.
	case c == 0x8D:
		p.chargePump = cmd[1]&0x04 != 0
	case c == 0xA0, c == 0xA1:
		p.segRemap = c == 0xA1
	case c == 0xA4, c == 0xA5:
		p.allOn = c == 0xA5
	case c == 0xA6, c == 0xA7:
		p.inverse = c == 0xA7
	case c == 0xA8:
		if cmd[1]&0x3F < 15 {
			return fmt.Errorf("panel: invalid multiplex ratio %#x", cmd[1])
		}
		p.mux = int(cmd[1] & 0x3F)
	case c == 0xAE, c == 0xAF:
		p.on = c == 0xAF
	case c >= 0xB0 && c <= 0xB7: // page start, page mode only
		if p.mode == 2 {
			p.page = int(c & 7)
		}
	case c == 0xC0, c == 0xC8:
		p.comReverse = c == 0xC8
	case c == 0xD3:
		p.offset = int(cmd[1] & 0x3F)
	case c == 0xDA:
		p.comPins = cmd[1]
	case c == 0xE3: // NOP
	default:
		return fmt.Errorf("panel: unknown command %#x", c)
	}
	return nil
}

func (p *panel) data(b []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.pending) != 0 {
		return fmt.Errorf("panel: data while command %#x waits for its parameters", p.pending)
	}
	p.dataWrites++
	for _, v := range b {
		p.ram[p.page][p.col] = v
		switch p.mode {
		case 2: // page: the column wraps, the page stays
			p.col = (p.col + 1) & 0x7F
		case 0: // horizontal
			if p.col++; p.col > p.colEnd {
				p.col = p.colStart
				if p.page++; p.page > p.pageEnd {
					p.page = p.pageStart
				}
			}
		case 1: // vertical
			if p.page++; p.page > p.pageEnd {
				p.page = p.pageStart
				if p.col++; p.col > p.colEnd {
					p.col = p.colStart
				}
			}
		}
	}
	return nil
}

// shown returns what the glass shows (255 lit), or an error saying why the
// controller's settings would not show its memory as a picture on this
// module: the modules are wired so that the usual settings (column 127 on
// SEG0, COM scanning downwards) put memory column 0, page 0, bit 0 at the
// top left.
func (p *panel) shown() (*image.Gray, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	wantPins := byte(0x12) // 64 rows: alternate COM pins
	if p.h == 32 {
		wantPins = 0x02 // 32 rows: sequential
	}
	switch {
	case !p.chargePump:
		return nil, errors.New("panel: charge pump off, the glass stays dark")
	case p.allOn || p.inverse:
		return nil, errors.New("panel: entire display on or inverted")
	case p.scrolling:
		return nil, errors.New("panel: scrolling")
	case p.offset != 0 || p.startLine != 0:
		return nil, fmt.Errorf("panel: display offset %d, start line %d", p.offset, p.startLine)
	case p.mux != p.h-1:
		return nil, fmt.Errorf("panel: multiplex ratio %d on %d rows", p.mux+1, p.h)
	case p.comPins != wantPins:
		return nil, fmt.Errorf("panel: COM pins %#x on %d rows, want %#x: rows would be missing or swapped", p.comPins, p.h, wantPins)
	}
	img := image.NewGray(image.Rect(0, 0, p.w, p.h))
	if !p.on {
		return img, nil
	}
	for y := 0; y < p.h; y++ {
		r := y
		if !p.comReverse {
			r = p.h - 1 - y
		}
		for x := 0; x < p.w; x++ {
			c := x
			if !p.segRemap {
				c = 127 - x
			}
			if p.ram[r/8][c]>>(r%8)&1 == 1 {
				img.Pix[y*img.Stride+x] = 255
			}
		}
	}
	return img, nil
}

func (p *panel) isOn() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.on
}

// errNACK is what a bus says when no device acknowledges its address.
var errNACK = errors.New("remote I/O error (no acknowledgement)")

// i2cPanel is an I2C bus with the panel at addr.
type i2cPanel struct {
	*panel
	addr uint16
	// failAt, if not zero, makes the transfer with that number (from 1)
	// fail without reaching the panel, like a glitch on the wire.
	failAt, count int
}

func (b *i2cPanel) String() string                    { return "fake-i2c" }
func (b *i2cPanel) SetSpeed(f physic.Frequency) error { return nil }

func (b *i2cPanel) Tx(addr uint16, w, r []byte) error {
	if addr != b.addr {
		return errNACK
	}
	if b.count++; b.count == b.failAt {
		return errNACK
	}
	if len(r) != 0 || len(w) == 0 {
		return fmt.Errorf("fake-i2c: write %d bytes and read %d: the SSD1306 is written only", len(w), len(r))
	}
	switch w[0] { // the control byte: Co=0, D/C# selects the stream
	case 0x00:
		return b.command(w[1:])
	case 0x40:
		return b.data(w[1:])
	}
	return fmt.Errorf("fake-i2c: control byte %#x", w[0])
}

// spiPanel is an SPI port with the panel on it; dc is its data/command pin.
type spiPanel struct {
	*panel
	dc        *dcPin
	connected bool
}

func (s *spiPanel) String() string                      { return "fake-spi" }
func (s *spiPanel) Close() error                        { return nil }
func (s *spiPanel) LimitSpeed(f physic.Frequency) error { return nil }

func (s *spiPanel) Connect(f physic.Frequency, mode spi.Mode, bits int) (spi.Conn, error) {
	if s.connected {
		return nil, errors.New("fake-spi: Connect can be called once") // as spidev
	}
	if f > 10*physic.MegaHertz || mode != spi.Mode0 || bits != 8 {
		return nil, fmt.Errorf("fake-spi: %s mode %d %d bits: the SSD1306 wants <= 10MHz, mode 0, 8 bits", f, mode, bits)
	}
	s.connected = true
	return spiConn{s}, nil
}

type spiConn struct{ s *spiPanel }

func (c spiConn) String() string                 { return "fake-spi" }
func (c spiConn) Duplex() conn.Duplex            { return conn.Half }
func (c spiConn) TxPackets(p []spi.Packet) error { return errors.New("fake-spi: no TxPackets") }

func (c spiConn) Tx(w, r []byte) error {
	if len(r) != 0 {
		return errors.New("fake-spi: the SSD1306 is written only")
	}
	if c.s.dc.level() == gpio.High {
		return c.s.data(w)
	}
	return c.s.command(w)
}

// dcPin is an output pin that remembers its level.
type dcPin struct {
	mu sync.Mutex
	l  gpio.Level
}

func (d *dcPin) String() string   { return "fake-dc" }
func (d *dcPin) Halt() error      { return nil }
func (d *dcPin) Name() string     { return "fake-dc" }
func (d *dcPin) Number() int      { return 25 }
func (d *dcPin) Function() string { return string(d.Func()) }
func (d *dcPin) Func() pin.Func   { return gpio.OUT }
func (d *dcPin) PWM(gpio.Duty, physic.Frequency) error {
	return errors.New("fake-dc: no PWM")
}

func (d *dcPin) Out(l gpio.Level) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.l = l
	return nil
}

func (d *dcPin) level() gpio.Level {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.l
}
