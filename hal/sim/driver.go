package sim

import (
	"context"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/driverreg"
)

// SpeakerDriver and FaceDriver register the simulated parts as the drivers named sim.
var (
	SpeakerDriver = &driverreg.Speaker{
		Name: "sim",
		Open: func(context.Context, driverreg.SpeakerConfig, *driverreg.Env) (hal.Speaker, error) {
			return NewSpeaker(nil), nil
		},
		Simulated: true,
	}
	FaceDriver = &driverreg.Face{
		Name: "sim",
		Open: func(context.Context, driverreg.FaceConfig, *driverreg.Env) (hal.Face, error) {
			return NewFace(nil), nil
		},
	}
)
