package oled_test

import (
	"image"

	"periph.io/x/conn/v3/conntest"
	"periph.io/x/conn/v3/i2c/i2ctest"

	"github.com/devicectl/devicectl/hal/oled"
)

// This file builds, from the SSD1306 datasheet and faces' pixels alone, the
// bytes a Face must put on the bus.

// xfer is one transfer: a command or a data stream.
type xfer struct {
	data bool
	b    []byte
}

func cmd(b ...byte) xfer { return xfer{false, b} }

// initCmds is the controller set-up periph's driver sends (datasheet
// section 9 and its application note's flow), followed by this package's
// switch to page addressing mode.
func initCmds(s oled.Size, rotated bool) []xfer {
	seg, com := byte(0xA1), byte(0xC8) // column 127 on SEG0, COM scanning down
	if rotated {
		seg, com = 0xA0, 0xC0
	}
	pins := byte(0x12) // alternate COM pins, 64 rows
	if s.H == 32 {
		pins = 0x02 // sequential, 32 rows
	}
	return []xfer{
		cmd(0xAE, 0xD3, 0x00, 0x40, seg, com, 0xDA, pins, 0x81, 0xFF, 0xA4, 0xA6,
			0xD5, 0xF0, 0x8D, 0x14, 0xD9, 0xF1, 0xDB, 0x40, 0x2E, 0xA8, byte(s.H-1),
			0x20, 0x00, 0x21, 0x00, byte(s.W-1), 0x22, 0x00, byte(s.H/8-1), 0xAF),
		cmd(0x20, 0x02),
	}
}

// pages packs img into the controller's memory layout: page p holds rows
// 8p..8p+7, one byte per column, the top row in bit 0.
func pages(img *image.Gray) [][]byte {
	b := img.Bounds()
	out := make([][]byte, b.Dy()/8)
	for p := range out {
		out[p] = make([]byte, b.Dx())
		for x := range out[p] {
			for bit := 0; bit < 8; bit++ {
				if img.GrayAt(x, 8*p+bit).Y >= 128 {
					out[p][x] |= 1 << bit
				}
			}
		}
	}
	return out
}

// update is what redraws the smallest block of pages and columns where
// from and to differ, each page placed with page-mode addressing; all of
// it when from is nil. wake prefixes the first command with display on, as
// a driver does after turning the panel off.
func update(from, to *image.Gray, wake bool) []xfer {
	t := pages(to)
	p0, p1, c0, c1 := 0, len(t), 0, len(t[0])
	if from != nil {
		f := pages(from)
		differs := func(p, c int) bool { return f[p][c] != t[p][c] }
		p0, p1, c0, c1 = len(t), -1, len(t[0]), -1
		for p := range t {
			for c := range t[p] {
				if differs(p, c) {
					p0, p1 = min(p0, p), max(p1, p+1)
					c0, c1 = min(c0, c), max(c1, c+1)
				}
			}
		}
		if p1 < 0 {
			return nil
		}
	}
	var out []xfer
	for p := p0; p < p1; p++ {
		place := []byte{0xB0 | byte(p), byte(c0) & 0x0F, 0x10 | byte(c0)>>4}
		if wake && p == p0 {
			place = append([]byte{0xAF}, place...)
		}
		out = append(out, cmd(place...), xfer{true, t[p][c0:c1]})
	}
	return out
}

// i2cOps frames transfers as I2C writes to addr: a control byte of 0x00
// starts a command stream, 0x40 a data stream.
func i2cOps(addr uint16, xs []xfer) []i2ctest.IO {
	var out []i2ctest.IO
	for _, x := range xs {
		ctl := byte(0x00)
		if x.data {
			ctl = 0x40
		}
		out = append(out, i2ctest.IO{Addr: addr, W: append([]byte{ctl}, x.b...)})
	}
	return out
}

// spiOps are transfers as SPI writes; the DC pin, not a byte, tells
// commands from data.
func spiOps(xs []xfer) []conntest.IO {
	var out []conntest.IO
	for _, x := range xs {
		out = append(out, conntest.IO{W: x.b})
	}
	return out
}
