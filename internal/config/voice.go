package config

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/devicectl/devicectl/hal/mic"
	"github.com/devicectl/devicectl/voice"
)

// MicrophoneConfig says which microphone the device hears through (hardware.microphone).
type MicrophoneConfig struct {
	Driver  string   // none (no microphone), sim, pulse, alsa, command, file
	Device  string   // pulse: the source; alsa: the device; empty: the default one
	Command []string // command: writes 16 kHz mono s16le to stdout
	File    string   // file: a 16 kHz mono 16-bit WAV, heard once and then silence
}

// MicrophoneOff is hardware.microphone.driver when there is no microphone: the default, so a
// device configured before voice existed hears nothing and opens nothing.
const MicrophoneOff = "none"

// Mic returns the hal/mic configuration of c; its Driver is "" when c is off.
func (c MicrophoneConfig) Mic() mic.Config {
	if c.Driver == MicrophoneOff {
		return mic.Config{}
	}
	return mic.Config{Driver: c.Driver, Device: c.Device, Command: c.Command, File: c.File}
}

// VoiceConfig is the voice section: when the device listens, how an utterance is found, and who
// turns it into text.
type VoiceConfig struct {
	Listen     string // off, vad, button, wake
	VAD        voice.VADConfig
	Button     string   // button: the push-to-talk GPIO, e.g. GPIO17
	WakeWord   string   // wake: the keyword, e.g. "hey robot"
	STT        string   // server, command, openai
	STTCommand []string // command: reads a WAV on stdin, prints the text
	OpenAI     OpenAISTTConfig
	Language   string // of what is said; empty: device.language
}

// OpenAISTTConfig is an OpenAI-compatible /v1/audio/transcriptions endpoint (voice.stt openai).
type OpenAISTTConfig struct {
	BaseURL    string
	Model      string
	APIKeyFile string
}

// The values of voice.listen and voice.stt.
const (
	ListenOff    = "off"
	ListenVAD    = "vad"
	ListenButton = "button"
	ListenWake   = "wake"

	STTServer  = "server"
	STTCommand = "command"
	STTOpenAI  = "openai"
)

// VoiceLang is the language of what is said: voice.language, or device.language when unset.
func (c *Config) VoiceLang() string {
	if c.Voice.Language != "" {
		return c.Voice.Language
	}
	return c.Device.Language
}

func defaultVoice() VoiceConfig {
	return VoiceConfig{Listen: ListenOff, VAD: voice.DefaultVAD, STT: STTServer}
}

func microphoneSettings() []setting {
	mc := func(c *Config) *MicrophoneConfig { return &c.Hardware.Microphone }
	return []setting{
		enumKey("hardware.microphone.driver", "", "what the device hears through, for voice.listen", func(c *Config) *string { return &mc(c).Driver }, append([]string{MicrophoneOff}, mic.Drivers()...)...),
		stringKey("hardware.microphone.device", "", "pulse: the source (pactl list short sources), e.g. an echo-cancelled one; alsa: the device (arecord -L), e.g. plughw:1; empty: the default one", func(c *Config) *string { return &mc(c).Device }, nil),
		listKey("hardware.microphone.command", "command: a program that writes 16 kHz mono signed 16-bit little-endian PCM to stdout, as a list (no shell)", func(c *Config) *[]string { return &mc(c).Command }),
		stringKey("hardware.microphone.file", "", "file: a 16 kHz mono 16-bit WAV heard once, then silence (demos, tests)", func(c *Config) *string { return &mc(c).File }, nil),
	}
}

// languagePattern is a language tag as speech-to-text engines take it: en, zh, en-US, yue.
var languagePattern = regexp.MustCompile(`^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$`)

func voiceSettings() []setting {
	vc := func(c *Config) *VoiceConfig { return &c.Voice }
	return []setting{
		enumKey("voice.listen", "voice", "when the device listens: off; vad, every utterance; button, while voice.button is held; wake, the utterance after voice.wake_word", func(c *Config) *string { return &vc(c).Listen }, ListenOff, ListenVAD, ListenButton, ListenWake),
		floatKey("voice.vad.threshold", "how far above the room's noise floor, in dB, a sound must be to count as speech", func(c *Config) *float64 { return &vc(c).VAD.Threshold }, 1, 60),
		floatKey("voice.vad.min_level", "the level, in dBFS, speech must reach however quiet the room", func(c *Config) *float64 { return &vc(c).VAD.MinLevel }, -96, -1),
		durationKey("voice.vad.min_speech", "", "speech shorter than this is a click, not an utterance", func(c *Config) *time.Duration { return &vc(c).VAD.MinSpeech }),
		durationKey("voice.vad.silence", "", "a pause this long ends an utterance", func(c *Config) *time.Duration { return &vc(c).VAD.Silence }),
		durationKey("voice.vad.max_utterance", "", "an utterance is cut at this length (at most 30s, what the server takes)", func(c *Config) *time.Duration { return &vc(c).VAD.MaxUtterance }),
		durationKey("voice.vad.pre_roll", "", "audio kept from before the speech was detected: its soft first consonant", func(c *Config) *time.Duration { return &vc(c).VAD.PreRoll }),
		stringKey("voice.button", "", "button: the push-to-talk GPIO (pressed pulls it low), e.g. GPIO17", func(c *Config) *string { return &vc(c).Button }, checkPinName),
		stringKey("voice.wake_word", "", "wake: the keyword that starts listening, spotted by pocketsphinx, e.g. hey robot", func(c *Config) *string { return &vc(c).WakeWord }, nil),
		enumKey("voice.stt", "", "who turns speech into text: server, the agent server (mcp/user/audio); command or openai, the device itself (mcp/user/text)", func(c *Config) *string { return &vc(c).STT }, STTServer, STTCommand, STTOpenAI),
		listKey("voice.stt_command", "command: a program that reads a WAV on stdin and prints the text, as a list (no shell)", func(c *Config) *[]string { return &vc(c).STTCommand }),
		stringKey("voice.openai.base_url", "", "openai: the OpenAI-compatible API's base URL (POST BASE/audio/transcriptions), e.g. http://127.0.0.1:8000/v1", func(c *Config) *string { return &vc(c).OpenAI.BaseURL }, checkHTTPURL),
		stringKey("voice.openai.model", "", "openai: the transcription model, e.g. whisper-1", func(c *Config) *string { return &vc(c).OpenAI.Model }, nil),
		stringKey("voice.openai.api_key_file", "", "openai: file holding the API key (sent as Authorization: Bearer); empty: none", func(c *Config) *string { return &vc(c).OpenAI.APIKeyFile }, nil),
		stringKey("voice.language", "", "the language spoken to the device, e.g. en, zh; empty: device.language", func(c *Config) *string { return &vc(c).Language }, checkLanguage),
	}
}

// floatKey is a number within lo..hi.
func floatKey(key, usage string, p func(*Config) *float64, lo, hi float64) setting {
	return setting{key: key, usage: usage, typ: "number",
		get: func(c *Config) string { return strconv.FormatFloat(*p(c), 'g', -1, 64) },
		set: func(c *Config, v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return fmt.Errorf("%q is not a number", v)
			}
			if f < lo || f > hi {
				return fmt.Errorf("%g is out of range %g..%g", f, lo, hi)
			}
			*p(c) = f
			return nil
		},
	}
}

func checkPinName(v string) (string, error) {
	for _, r := range v {
		if r <= ' ' || r == '/' {
			return "", fmt.Errorf("%q is not a GPIO name (e.g. GPIO17)", v)
		}
	}
	return v, nil
}

func checkLanguage(v string) (string, error) {
	if !languagePattern.MatchString(v) {
		return "", fmt.Errorf("%q is not a language tag (e.g. en, zh, en-US)", v)
	}
	return v, nil
}

// maxUtterance is the longest utterance the protocol carries (mcp/user/audio).
const maxUtterance = 30 * time.Second

// checkVoice validates what the voice keys say together and with the microphone.
func (c *Config) checkVoice() error {
	v := &c.Voice
	if err := v.VAD.Check(); err != nil {
		return &Error{Key: "voice.vad", Err: err}
	}
	if v.VAD.MaxUtterance > maxUtterance {
		return &Error{Key: "voice.vad.max_utterance", Err: fmt.Errorf("%s is longer than the %s an utterance may be", v.VAD.MaxUtterance, maxUtterance)}
	}
	switch v.STT {
	case STTCommand:
		if len(v.STTCommand) == 0 {
			return &Error{Key: "voice.stt_command", Err: errors.New("voice.stt is command and voice.stt_command is not set")}
		}
	case STTOpenAI:
		if v.OpenAI.BaseURL == "" {
			return &Error{Key: "voice.openai.base_url", Err: errors.New("voice.stt is openai and voice.openai.base_url is not set")}
		}
		if v.OpenAI.Model == "" {
			return &Error{Key: "voice.openai.model", Err: errors.New("voice.stt is openai and voice.openai.model is not set")}
		}
	}
	if v.Listen == ListenOff {
		return nil
	}
	if c.Hardware.Microphone.Driver == MicrophoneOff && c.Hardware.Mode != "sim" {
		return &Error{Key: "voice.listen", Err: fmt.Errorf("%s needs a microphone: set hardware.microphone.driver (%s)", v.Listen, strings.Join(mic.Drivers(), ", "))}
	}
	switch v.Listen {
	case ListenButton:
		if v.Button == "" {
			return &Error{Key: "voice.button", Err: errors.New("voice.listen is button and voice.button (the push-to-talk GPIO, e.g. GPIO17) is not set")}
		}
	case ListenWake:
		if v.WakeWord == "" {
			return &Error{Key: "voice.wake_word", Err: errors.New("voice.listen is wake and voice.wake_word is not set")}
		}
	}
	return nil
}

// check validates the microphone section's keys together.
func (m *MicrophoneConfig) check() error {
	switch m.Driver {
	case mic.DriverCommand:
		if len(m.Command) == 0 {
			return &Error{Key: "hardware.microphone.command", Err: errors.New("hardware.microphone.driver is command and hardware.microphone.command is not set")}
		}
	case mic.DriverFile:
		if m.File == "" {
			return &Error{Key: "hardware.microphone.file", Err: errors.New("hardware.microphone.driver is file and hardware.microphone.file is not set")}
		}
	}
	return nil
}
