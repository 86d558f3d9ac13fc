//go:build !devicectl_omit_stt

package daemon

import (
	"log/slog"

	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/voice"
)

// transcriber is the on-device speech to text voice.stt asks for; nil when the server transcribes.
func transcriber(c *config.Config, log *slog.Logger) (voice.Transcriber, error) {
	switch c.Voice.STT {
	case config.STTCommand:
		return &voice.CommandSTT{Argv: c.Voice.STTCommand}, nil
	case config.STTOpenAI:
		o := &voice.OpenAISTT{BaseURL: c.Voice.OpenAI.BaseURL, Model: c.Voice.OpenAI.Model}
		if f := c.Voice.OpenAI.APIKeyFile; f != "" {
			key, err := config.ReadSecret("voice.openai.api_key_file", f, log)
			if err != nil {
				return nil, err
			}
			o.APIKey = key
		}
		return o, nil
	}
	return nil, nil
}
