//go:build devicectl_omit_stt

package daemon

import (
	"errors"
	"log/slog"

	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/voice"
)

// errNoSTT is why a build with the devicectl_omit_stt tag (the board build) refuses on-device
// speech to text: the board sends what it hears to the server, which transcribes it.
var errNoSTT = errors.New("this devicectl is built without on-device speech to text (the devicectl_omit_stt build tag); use voice.stt server, or make build, which includes it")

func transcriber(c *config.Config, _ *slog.Logger) (voice.Transcriber, error) {
	if c.Voice.STT != config.STTServer {
		return nil, &config.Error{Key: "voice.stt", Err: errNoSTT}
	}
	return nil, nil
}
