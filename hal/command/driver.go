package command

import (
	"context"
	"errors"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/driverreg"
)

// Driver is the face driver command: hardware.face.command run with the expression appended.
var Driver = &driverreg.Face{
	Name: "command",
	Open: func(ctx context.Context, c driverreg.FaceConfig, _ *driverreg.Env) (hal.Face, error) {
		return New(ctx, c.Command, nil)
	},
	Check: func(c driverreg.FaceConfig) error {
		if len(c.Command) == 0 {
			return &driverreg.KeyError{Key: "command", Err: errors.New("hardware.face.driver is command but no command is set (a list, e.g. [/usr/local/bin/show-face])")}
		}
		return nil
	},
	Remedy: func(driverreg.FaceConfig) string {
		return "is hardware.face.command's program installed and executable by the service user?"
	},
}
