package config

import (
	"errors"
	"strings"
	"testing"
)

// What the voice keys say together is checked, each error naming the key to fix.
func TestVoiceChecks(t *testing.T) {
	cases := []struct {
		name, doc, key, want string
	}{
		{"off needs nothing", "voice:\n  listen: off\n", "", ""},
		{"vad without a microphone", "voice:\n  listen: vad\n", "voice.listen", "vad needs a microphone: set hardware.microphone.driver"},
		{"vad on sim hardware", "hardware:\n  mode: sim\nvoice:\n  listen: vad\n", "", ""},
		{"vad with a microphone", "hardware:\n  microphone:\n    driver: pulse\nvoice:\n  listen: vad\n", "", ""},
		{"button without a pin", "hardware:\n  microphone:\n    driver: sim\nvoice:\n  listen: button\n", "voice.button", "voice.listen is button and voice.button"},
		{"button with a pin", "hardware:\n  microphone:\n    driver: sim\nvoice:\n  listen: button\n  button: GPIO17\n", "", ""},
		{"wake without a word", "hardware:\n  microphone:\n    driver: alsa\nvoice:\n  listen: wake\n", "voice.wake_word", "voice.wake_word is not set"},
		{"stt command without a command", "voice:\n  stt: command\n", "voice.stt_command", "voice.stt is command"},
		{"stt openai without a URL", "voice:\n  stt: openai\n  openai:\n    model: whisper-1\n", "voice.openai.base_url", "not set"},
		{"stt openai without a model", "voice:\n  stt: openai\n  openai:\n    base_url: http://127.0.0.1:8000/v1\n", "voice.openai.model", "not set"},
		{"utterance too long", "voice:\n  vad:\n    max_utterance: 31s\n", "voice.vad.max_utterance", "31s is longer than the 30s"},
		{"max shorter than min speech", "voice:\n  vad:\n    min_speech: 2s\n    max_utterance: 1s\n", "voice.vad", "max_utterance 1s must be longer than min_speech 2s"},
		{"command microphone without a command", "hardware:\n  microphone:\n    driver: command\n", "hardware.microphone.command", "not set"},
		{"file microphone without a file", "hardware:\n  microphone:\n    driver: file\n", "hardware.microphone.file", "not set"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Defaults()
			if err := Parse([]byte(tc.doc), c); err != nil {
				t.Fatalf("Parse: %v", err)
			}
			err := c.Check()
			if tc.key == "" {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				return
			}
			var ce *Error
			if !errors.As(err, &ce) || ce.Key != tc.key || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check = %v; want a *Error for %s containing %q", err, tc.key, tc.want)
			}
		})
	}
}

// Without a voice section a device hears nothing: existing configs keep working unchanged.
func TestVoiceOffByDefault(t *testing.T) {
	c := Defaults()
	if c.Voice.Listen != ListenOff || c.Hardware.Microphone.Driver != MicrophoneOff || c.Hardware.Microphone.Mic().Driver != "" {
		t.Errorf("defaults: listen %q, microphone %q", c.Voice.Listen, c.Hardware.Microphone.Driver)
	}
	c.Device.Language = "en"
	if got := c.VoiceLang(); got != "en" {
		t.Errorf("VoiceLang = %q, want device.language en", got)
	}
	c.Voice.Language = "zh"
	if got := c.VoiceLang(); got != "zh" {
		t.Errorf("VoiceLang = %q, want voice.language zh", got)
	}
}
