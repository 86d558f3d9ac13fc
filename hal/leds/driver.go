package leds

import (
	"context"

	"periph.io/x/conn/v3/spi"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/driverreg"
)

// APA102Driver and WS2812Driver are the face drivers of LED strips and rings on SPI
// (hardware.face.bus, .pixels, .brightness).
var (
	APA102Driver = spiDriver("apa102", NewAPA102)
	WS2812Driver = spiDriver("ws2812", NewWS2812)
)

func spiDriver(name string, open func(spi.Port, int, int, *Options) (*Face, error)) *driverreg.Face {
	return &driverreg.Face{
		Name: name,
		Open: func(_ context.Context, c driverreg.FaceConfig, env *driverreg.Env) (hal.Face, error) {
			port, err := env.Buses.SPI(c.Bus)
			if err != nil {
				return nil, err
			}
			return open(port, c.Pixels, c.Brightness, nil)
		},
		Remedy: func(driverreg.FaceConfig) string {
			return "is SPI enabled (ls /dev/spidev*) and the user in the spi group? set hardware.face.bus to the port"
		},
	}
}
