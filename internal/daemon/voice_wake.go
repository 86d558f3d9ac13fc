//go:build !devicectl_omit_wake

package daemon

import (
	"log/slog"

	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/voice"
)

// newSpotter starts pocketsphinx listening for voice.wake_word.
func newSpotter(c *config.Config, log *slog.Logger) (voice.Spotter, error) {
	sp, err := voice.NewPocketSphinx(c.Voice.WakeWord, &voice.PocketSphinxOptions{Logger: log})
	if err != nil {
		return nil, &config.Error{Key: "voice.wake_word", Err: err}
	}
	return sp, nil
}
