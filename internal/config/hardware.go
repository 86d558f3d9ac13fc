package config

import (
	"errors"
	"fmt"
	"image"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/devicectl/devicectl/hal/driverreg"
)

// HardwareConfig chooses a backend for each part of the device. Mode "sim" (the --hardware sim
// flag) replaces every part with its simulation, whatever the parts say, so a config written for a
// board still runs on a laptop.
type HardwareConfig struct {
	Mode string // "config": each part as configured; "sim": everything simulated, no speech
	// SimLatency, with Mode "sim", is how long each read or change of a simulated part takes;
	// set (0 too), the parts count as real ones, whose calls run as a board's do. nil: the parts
	// are instant.
	SimLatency *time.Duration
	Speaker    SpeakerConfig
	Face       FaceConfig
	Speech     SpeechConfig
	Microphone MicrophoneConfig
}

// SpeakerConfig and FaceConfig are the sections the drivers read; hal/driverreg defines them,
// so a backend needs nothing of this package.
type (
	SpeakerConfig = driverreg.SpeakerConfig
	FaceConfig    = driverreg.FaceConfig
)

// SpeechConfig says whether and how AI replies are spoken.
type SpeechConfig struct {
	Driver    string   // none, command
	Command   []string // reads the text on stdin; empty: espeak-ng in device.language
	Sentences bool     // speak each sentence as the chunks bring it, not the whole reply at its end
}

func defaultHardware() HardwareConfig {
	return HardwareConfig{
		Mode:       "config",
		Speaker:    SpeakerConfig{Driver: "sim", Device: "", Control: "Master", Tool: "pactl", Address: 0x4B, Start: 40},
		Face:       FaceConfig{Driver: "sim", Connection: "i2c", Address: 0x3C, Size: image.Pt(128, 64), Pixels: 12, Brightness: 30},
		Speech:     SpeechConfig{Driver: "none", Sentences: true},
		Microphone: MicrophoneConfig{Driver: MicrophoneOff},
	}
}

// hardwareSettings are the hardware section's keys, in the order of configs/devicectl.yaml.
func hardwareSettings() []setting {
	return append(partSettings(), microphoneSettings()...)
}

func partSettings() []setting {
	sp := func(c *Config) *SpeakerConfig { return &c.Hardware.Speaker }
	fc := func(c *Config) *FaceConfig { return &c.Hardware.Face }
	return []setting{
		enumKey("hardware.mode", "hardware", "config: each part as the config file's hardware section says; sim: every part simulated and no speech, whatever the parts say", func(c *Config) *string { return &c.Hardware.Mode }, "config", "sim"),
		simLatencyKey(),

		oneOfKey("hardware.speaker.driver", "", "the speaker whose volume amplify_volume sets", func(c *Config) *string { return &sp(c).Driver }, driverreg.Default.SpeakerNames),
		stringKey("hardware.speaker.device", "", "alsa: the ALSA device (amixer -D), e.g. default, hw:0, pulse; pulse: the sink (pactl) or node (wpctl); empty: the default one", func(c *Config) *string { return &sp(c).Device }, nil),
		stringKey("hardware.speaker.control", "", "alsa: the mixer control", func(c *Config) *string { return &sp(c).Control }, nil),
		enumKey("hardware.speaker.tool", "", "pulse: the program that sets the volume", func(c *Config) *string { return &sp(c).Tool }, "pactl", "wpctl"),
		stringKey("hardware.speaker.bus", "", "max9744: the I2C bus, e.g. 1 or /dev/i2c-1; empty: the first one", func(c *Config) *string { return &sp(c).Bus }, nil),
		addressKey("hardware.speaker.address", "max9744: the amplifier's I2C address", func(c *Config) *uint16 { return &sp(c).Address }),
		intKey("hardware.speaker.start_volume", "", "alsa, pulse, max9744: the volume (percent) set at start-up; a stop mutes the speaker, and a MAX9744 cannot be read back", func(c *Config) *int { return &sp(c).Start }, 0, 100),
		boolKey("hardware.speaker.optional", "", "when the speaker is missing at start-up, start without amplify_volume instead of failing", func(c *Config) *bool { return &sp(c).Optional }),

		oneOfKey("hardware.face.driver", "", "the display set_virtual_human_expression drives", func(c *Config) *string { return &fc(c).Driver }, driverreg.Default.FaceNames),
		enumKey("hardware.face.connection", "", "ssd1306: how the display is wired", func(c *Config) *string { return &fc(c).Connection }, "i2c", "spi"),
		stringKey("hardware.face.bus", "", "the I2C bus (ssd1306 over i2c) or SPI port (ssd1306 over spi, apa102, ws2812), e.g. 1 or SPI0.0; empty: the first one", func(c *Config) *string { return &fc(c).Bus }, nil),
		addressKey("hardware.face.address", "ssd1306 over i2c: the display's I2C address", func(c *Config) *uint16 { return &fc(c).Address }),
		stringKey("hardware.face.dc_pin", "", "ssd1306 over spi: the data/command GPIO, e.g. GPIO25", func(c *Config) *string { return &fc(c).DCPin }, nil),
		sizeChoiceKey("hardware.face.size", "ssd1306: the display's size in pixels", func(c *Config) *image.Point { return &fc(c).Size }, image.Pt(128, 64), image.Pt(128, 32)),
		intKey("hardware.face.pixels", "", "apa102, ws2812: the number of LEDs", func(c *Config) *int { return &fc(c).Pixels }, 1, 1024),
		intKey("hardware.face.brightness", "", "apa102, ws2812: brightness in percent", func(c *Config) *int { return &fc(c).Brightness }, 1, 100),
		listKey("hardware.face.command", "command: the program and its first arguments, as a list (no shell); the expression is appended", func(c *Config) *[]string { return &fc(c).Command }),
		boolKey("hardware.face.optional", "", "when the display is missing at start-up, start without set_virtual_human_expression instead of failing", func(c *Config) *bool { return &fc(c).Optional }),

		enumKey("hardware.speech.driver", "", "speak AI replies: none, or command", func(c *Config) *string { return &c.Hardware.Speech.Driver }, "none", "command"),
		listKey("hardware.speech.command", "command: the program that reads the text on stdin and speaks it, as a list (no shell); empty: espeak-ng in device.language", func(c *Config) *[]string { return &c.Hardware.Speech.Command }),
		boolKey("hardware.speech.sentences", "", "speak each sentence as soon as the chunks complete it (the first is heard before the reply ends); false: the whole reply at its end", func(c *Config) *bool { return &c.Hardware.Speech.Sentences }),
	}
}

// simLatencyKey is hardware.sim_latency: empty (instant parts) or a duration, 0 included.
func simLatencyKey() setting {
	return setting{key: "hardware.sim_latency", flag: "sim-latency", typ: "duration",
		usage: "with hardware.mode sim: how long each read or change of a part takes (e.g. 2ms); set, 0s too, the parts count as real ones; empty: instant",
		get: func(c *Config) string {
			if c.Hardware.SimLatency == nil {
				return ""
			}
			return c.Hardware.SimLatency.String()
		},
		set: func(c *Config, v string) error {
			if v == "" {
				c.Hardware.SimLatency = nil
				return nil
			}
			d, err := time.ParseDuration(v)
			if err != nil {
				return fmt.Errorf("%q is not a duration (e.g. 0s, 2ms)", v)
			}
			if d < 0 {
				return fmt.Errorf("%q is negative", v)
			}
			c.Hardware.SimLatency = &d
			return nil
		},
	}
}

// addressKey is an I2C address, written in hex (0x3C) or decimal; 7-bit addresses only.
func addressKey(key, usage string, p func(*Config) *uint16) setting {
	return setting{key: key, usage: usage, typ: "address",
		get: func(c *Config) string { return fmt.Sprintf("0x%02X", *p(c)) },
		set: func(c *Config, v string) error {
			n, err := strconv.ParseUint(v, 0, 16)
			if err != nil {
				return fmt.Errorf("%q is not an I2C address (e.g. 0x3C)", v)
			}
			// 0x00-0x07 and 0x78-0x7F are reserved by the I2C specification.
			if n < 0x08 || n > 0x77 {
				return fmt.Errorf("0x%02X is outside the 7-bit I2C address range 0x08..0x77", n)
			}
			*p(c) = uint16(n)
			return nil
		},
	}
}

// listKey is a list of strings (a program's argv), from a YAML list.
func listKey(key, usage string, p func(*Config) *[]string) setting {
	return setting{key: key, usage: usage, typ: "list",
		get: func(c *Config) string { return formatList(*p(c)) },
		setList: func(c *Config, items []string) error {
			for i, it := range items {
				if it == "" {
					return fmt.Errorf("item %d is empty", i+1)
				}
			}
			if len(items) == 0 {
				items = nil // [] and no value mean the same: unset
			}
			*p(c) = items
			return nil
		},
	}
}

func formatList(items []string) string {
	quoted := make([]string, len(items))
	for i, it := range items {
		quoted[i] = strconv.Quote(it)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// sizeChoiceKey is a display size, WIDTHxHEIGHT, one of choices.
func sizeChoiceKey(key, usage string, p func(*Config) *image.Point, choices ...image.Point) setting {
	names := make([]string, len(choices))
	for i, pt := range choices {
		names[i] = formatPoint(pt)
	}
	return setting{key: key, usage: usage + " (" + strings.Join(names, ", ") + ")", typ: "string",
		get: func(c *Config) string { return formatPoint(*p(c)) },
		set: func(c *Config, v string) error {
			i := slices.Index(names, v)
			if i < 0 {
				return fmt.Errorf("%q is not one of %s", v, strings.Join(names, ", "))
			}
			*p(c) = choices[i]
			return nil
		},
	}
}

func formatPoint(pt image.Point) string { return strconv.Itoa(pt.X) + "x" + strconv.Itoa(pt.Y) }

// check validates what the hardware keys say together: each driver checks its section.
func (h *HardwareConfig) check() error {
	if h.Mode == "sim" {
		return nil // the parts are not used
	}
	var err error
	if d := driverreg.Default.Speaker(h.Speaker.Driver); d != nil && d.Check != nil {
		err = sectionError("hardware.speaker", d.Check(h.Speaker))
	}
	if d := driverreg.Default.Face(h.Face.Driver); err == nil && d != nil && d.Check != nil {
		err = sectionError("hardware.face", d.Check(h.Face))
	}
	if err == nil {
		err = h.Microphone.check()
	}
	return err
}

// sectionError names the key of section a driver's complaint is about.
func sectionError(section string, err error) error {
	if err == nil {
		return nil
	}
	var ke *driverreg.KeyError
	if errors.As(err, &ke) {
		return &Error{Key: section + "." + ke.Key, Err: ke.Err}
	}
	return &Error{Key: section, Err: err}
}
