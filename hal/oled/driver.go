package oled

import (
	"context"
	"errors"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/driverreg"
)

// Driver is the face driver ssd1306: an SSD1306 display on I2C (hardware.face.bus, .address) or
// SPI (hardware.face.bus, .dc_pin), of hardware.face.size.
var Driver = &driverreg.Face{
	Name: "ssd1306",
	Open: func(_ context.Context, c driverreg.FaceConfig, env *driverreg.Env) (hal.Face, error) {
		size := Size{W: c.Size.X, H: c.Size.Y}
		if c.Connection == "spi" {
			port, err := env.Buses.SPI(c.Bus)
			if err != nil {
				return nil, err
			}
			dc, err := env.Buses.Pin(c.DCPin)
			if err != nil {
				return nil, &driverreg.KeyError{Key: "dc_pin", Err: err}
			}
			return NewSPI(port, dc, size, nil)
		}
		bus, err := env.Buses.I2C(c.Bus)
		if err != nil {
			return nil, err
		}
		return NewI2C(bus, c.Address, size, nil)
	},
	Check: func(c driverreg.FaceConfig) error {
		if c.Connection == "spi" && c.DCPin == "" {
			return &driverreg.KeyError{Key: "dc_pin", Err: errors.New("an SSD1306 on SPI needs its data/command GPIO, e.g. GPIO25")}
		}
		return nil
	},
	Remedy: func(c driverreg.FaceConfig) string {
		if c.Connection == "spi" {
			return "check the wiring (MOSI, SCLK, CS, DC, RST) and that SPI is enabled; set hardware.face.bus and hardware.face.dc_pin"
		}
		return "check the wiring and find the address with i2cdetect -y BUS (usually 0x3C or 0x3D); set hardware.face.bus and hardware.face.address"
	},
}
