package pulse

import (
	"context"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/driverreg"
)

// Driver is the speaker driver pulse: hardware.speaker.tool and .device (the sink or node).
var Driver = &driverreg.Speaker{
	Name: "pulse",
	Open: func(ctx context.Context, c driverreg.SpeakerConfig, env *driverreg.Env) (hal.Speaker, error) {
		return New(ctx, &Options{Tool: c.Tool, Sink: c.Device, Logger: env.Logger})
	},
	Remedy: func(driverreg.SpeakerConfig) string {
		return "is PulseAudio or PipeWire running for this user (pactl info / wpctl status)? set hardware.speaker.device to a sink from pactl list short sinks"
	},
}
