package alsa

import (
	"context"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/driverreg"
)

// Driver is the speaker driver alsa: hardware.speaker.device and .control.
var Driver = &driverreg.Speaker{
	Name: "alsa",
	Open: func(ctx context.Context, c driverreg.SpeakerConfig, env *driverreg.Env) (hal.Speaker, error) {
		return New(ctx, &Options{Device: c.Device, Control: c.Control, Logger: env.Logger})
	},
	Remedy: func(driverreg.SpeakerConfig) string {
		return "list the devices with aplay -L and the controls with amixer -D DEVICE scontrols; set hardware.speaker.device and hardware.speaker.control; is the user in the audio group?"
	},
}
