// Package drivers registers devicectl's hardware backends with driverreg.Default. It is the
// registration list: a new backend is its own folder under hal/, with a driverreg.Speaker or
// driverreg.Face value, and one line below.
package drivers

import (
	"github.com/devicectl/devicectl/hal/alsa"
	"github.com/devicectl/devicectl/hal/command"
	"github.com/devicectl/devicectl/hal/driverreg"
	"github.com/devicectl/devicectl/hal/leds"
	"github.com/devicectl/devicectl/hal/max9744"
	"github.com/devicectl/devicectl/hal/oled"
	"github.com/devicectl/devicectl/hal/pulse"
	"github.com/devicectl/devicectl/hal/sim"
)

// The order is that of --help and the README: simulation first.
func init() {
	driverreg.Default.MustRegister(
		sim.SpeakerDriver,
		alsa.Driver,
		pulse.Driver,
		max9744.Driver,

		sim.FaceDriver,
		oled.Driver,
		leds.APA102Driver,
		leds.WS2812Driver,
		command.Driver,
	)
}
