package max9744

import (
	"context"
	"fmt"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/driverreg"
)

// Driver is the speaker driver max9744: hardware.speaker.bus and .address.
var Driver = &driverreg.Speaker{
	Name: "max9744",
	Open: func(_ context.Context, c driverreg.SpeakerConfig, env *driverreg.Env) (hal.Speaker, error) {
		bus, err := env.Buses.I2C(c.Bus)
		if err != nil {
			return nil, err
		}
		s, err := New(bus, c.Address)
		if err != nil {
			return nil, fmt.Errorf("no MAX9744 answers on I2C bus %s at 0x%02X: %w", driverreg.BusName(c.Bus), c.Address, err)
		}
		return s, nil
	},
	// The address pins select one of three; catch a typo before the bus is opened.
	Check: func(c driverreg.SpeakerConfig) error {
		if a := c.Address; a < 0x49 || a > 0x4B {
			return &driverreg.KeyError{Key: "address", Err: fmt.Errorf("0x%02X: a MAX9744 answers at 0x49, 0x4A or 0x4B", a)}
		}
		return nil
	},
	Blind: true, // the amplifier cannot be asked what it plays at
	Remedy: func(driverreg.SpeakerConfig) string {
		return "check the wiring and power, and find the address with i2cdetect -y BUS (0x49 to 0x4B); set hardware.speaker.bus and hardware.speaker.address"
	},
}
