// Package oled shows hal.Expressions on an SSD1306 monochrome OLED, the
// 0.96" 128x64 and 0.91" 128x32 modules, over I2C or 4-wire SPI, with
// periph.io's ssd1306 driver. Every face is faces.Draw at the panel's size,
// so it looks exactly as in the simulator and in hal/faces/testdata.
//
// # Wiring (Raspberry Pi header)
//
// I2C (NewI2C), the usual 4-pin module:
//
//	VCC  3.3V       pin 1
//	GND  GND        pin 6
//	SDA  GPIO2/SDA  pin 3
//	SCL  GPIO3/SCL  pin 5
//
// Enable I2C (dtparam=i2c_arm=on in config.txt, or raspi-config) and run as
// a user in the i2c group. The address is 0x3C, or 0x3D when the module's
// address jumper (SA0) is set; `i2cdetect -y 1` lists what answers.
//
// SPI (NewSPI), the 7-pin module in 4-wire mode:
//
//	VCC      3.3V          pin 1
//	GND      GND           pin 6
//	D0/SCK   GPIO11/SCLK   pin 23
//	D1/MOSI  GPIO10/MOSI   pin 19
//	CS       GPIO8/CE0     pin 24  (port SPI0.0)
//	DC       any free GPIO, e.g. GPIO25 pin 22
//	RES      3.3V, or a GPIO held high
//
// Enable SPI (dtparam=spi=on) and run as a user in the spi and gpio groups.
// The driver never pulses RES, so a module without its own power-on reset
// circuit must be reset before devicectl starts. 3-wire SPI (no DC pin) is
// not supported by periph's driver.
//
// # Behaviour
//
// A constructor initialises the controller and shows the initial
// expression (hal.Idle unless Options say otherwise), so a face that was
// opened shows what Expression reports. Over I2C a missing display is an
// error then, naming the bus and address; SPI has no acknowledgement, so
// there a missing display goes unnoticed.
//
// The controller is put in page addressing mode after periph's driver has
// initialised it in horizontal mode. The driver redraws only the pages and
// columns that changed, placing each page with the commands that, by the
// datasheet (10.1.1-10.1.3), work in page addressing mode only; in
// horizontal mode a chip that follows the datasheet would write every
// partial update at the wrong place. In page mode full and partial updates
// both land where they should.
//
// Halt blanks the panel's memory and turns the panel off (no OLED burns a
// face it is not showing); the face then reports hal.Idle, as every halted
// hal.Face does, and the next SetExpression lights the panel again. After
// a transfer fails, neither the panel's memory nor its registers can be
// trusted (a loose wire, a brown-out that reset it), so the next
// SetExpression initialises the controller again and redraws it whole.
//
// A Face is safe for concurrent use. A transfer cannot be interrupted (a
// whole frame takes about 25 ms at 400 kHz I2C, 100 ms at the Pi's default
// 100 kHz), so a context is checked before it starts.
package oled
