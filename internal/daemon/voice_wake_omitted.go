//go:build devicectl_omit_wake

package daemon

import (
	"errors"
	"log/slog"

	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/voice"
)

// errNoWake is why a build with the devicectl_omit_wake tag (the board build) refuses
// voice.listen wake.
var errNoWake = errors.New("this devicectl is built without the wake word (the devicectl_omit_wake build tag); use voice.listen vad or button, or make build, which includes it")

func newSpotter(*config.Config, *slog.Logger) (voice.Spotter, error) {
	return nil, &config.Error{Key: "voice.listen", Err: errNoWake}
}
