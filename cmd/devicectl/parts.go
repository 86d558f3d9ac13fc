package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/alsa"
	"github.com/devicectl/devicectl/hal/command"
	"github.com/devicectl/devicectl/hal/leds"
	"github.com/devicectl/devicectl/hal/max9744"
	"github.com/devicectl/devicectl/hal/oled"
	"github.com/devicectl/devicectl/hal/pulse"
	"github.com/devicectl/devicectl/hal/sim"
	"github.com/devicectl/devicectl/speech"
)

// This file maps each part's config onto its driver. A new driver joins a switch here, its keys
// join hwconfig.go, and doctor checks it with no more work.

// openSpeaker opens the speaker c names, sets its start-up volume and reads it back, so a part
// that is there but unusable fails now rather than at the server's first call. With keepLevel
// (doctor, beside a running service) a speaker that can be read keeps its level; a MAX9744,
// which cannot, is still set.
func openSpeaker(ctx context.Context, c SpeakerConfig, b *buses, keepLevel bool, log *slog.Logger) (hal.Speaker, error) {
	var spk hal.Speaker
	switch c.Driver {
	case "sim":
		return sim.NewSpeaker(nil), nil
	case "alsa":
		s, err := alsa.New(ctx, &alsa.Options{Device: c.Device, Control: c.Control, Logger: log})
		if err != nil {
			return nil, &PartError{Key: "hardware.speaker", Err: err}
		}
		spk = s
	case "pulse":
		s, err := pulse.New(ctx, &pulse.Options{Tool: c.Tool, Sink: c.Device, Logger: log})
		if err != nil {
			return nil, &PartError{Key: "hardware.speaker", Err: err}
		}
		spk = s
	case "max9744":
		bus, err := b.i2c(c.Bus)
		if err != nil {
			return nil, &PartError{Key: "hardware.speaker", Err: err}
		}
		s, err := max9744.New(bus, c.Address)
		if err != nil {
			return nil, &PartError{Key: "hardware.speaker", Err: fmt.Errorf("no MAX9744 answers on I2C bus %s at 0x%02X: %w", busName(c.Bus), c.Address, err)}
		}
		spk = s
	default: // unreachable: the driver is checked when parsed
		return nil, &PartError{Key: "hardware.speaker.driver", Err: fmt.Errorf("unknown driver %q", c.Driver)}
	}
	// A known level to start from: the last stop muted the speaker (Halt), and a MAX9744 cannot
	// be asked what it plays at.
	if !keepLevel || c.Driver == "max9744" {
		if err := spk.SetVolume(ctx, c.Start); err != nil {
			return nil, &PartError{Key: "hardware.speaker", Err: fmt.Errorf("setting the start-up volume of %s: %w", spk, err)}
		}
	}
	if _, err := spk.Volume(ctx); err != nil {
		return nil, &PartError{Key: "hardware.speaker", Err: fmt.Errorf("reading the volume of %s: %w", spk, err)}
	}
	return spk, nil
}

// openFace opens the display c names; opening draws its first expression (idle).
func openFace(ctx context.Context, c FaceConfig, b *buses, log *slog.Logger) (hal.Face, error) {
	fail := func(err error) (hal.Face, error) { return nil, &PartError{Key: "hardware.face", Err: err} }
	switch c.Driver {
	case "sim":
		return sim.NewFace(nil), nil
	case "ssd1306":
		size, err := oled.ParseSize(c.Size)
		if err != nil { // unreachable: the size is checked when parsed
			return fail(err)
		}
		if c.Connection == "spi" {
			port, err := b.spi(c.Bus)
			if err != nil {
				return fail(err)
			}
			dc, err := b.pin(c.DCPin)
			if err != nil {
				return nil, &PartError{Key: "hardware.face.dc_pin", Err: err}
			}
			f, err := oled.NewSPI(port, dc, size, nil)
			if err != nil {
				return fail(err)
			}
			return f, nil
		}
		bus, err := b.i2c(c.Bus)
		if err != nil {
			return fail(err)
		}
		f, err := oled.NewI2C(bus, c.Address, size, nil)
		if err != nil {
			return fail(err)
		}
		return f, nil
	case "apa102", "ws2812":
		port, err := b.spi(c.Bus)
		if err != nil {
			return fail(err)
		}
		open := leds.NewAPA102
		if c.Driver == "ws2812" {
			open = leds.NewWS2812
		}
		f, err := open(port, c.Pixels, c.Brightness, nil)
		if err != nil {
			return fail(err)
		}
		return f, nil
	case "command":
		f, err := command.New(ctx, c.Command, nil)
		if err != nil {
			return fail(err)
		}
		return f, nil
	}
	return nil, &PartError{Key: "hardware.face.driver", Err: fmt.Errorf("unknown driver %q", c.Driver)}
}

// openSpeech returns the voice for AI replies, nil when speech is off.
func openSpeech(c SpeechConfig, lang string, log *slog.Logger) (speechOut, error) {
	if c.Driver == "none" {
		return nil, nil
	}
	opts := &speech.Options{Command: c.Command, Lang: lang, Sentences: c.Sentences, Logger: log}
	s, err := speech.NewSpeaker(opts)
	if err != nil {
		return nil, &PartError{Key: "hardware.speech", Err: err}
	}
	return &spokenReplies{Narrator: speech.NewNarrator(s, opts), speaker: s}, nil
}

// spokenReplies speaks the replies a Narrator picks out of the message stream.
type spokenReplies struct {
	*speech.Narrator
	speaker *speech.Speaker
}

func (r *spokenReplies) Close() error   { return r.speaker.Close() }
func (r *spokenReplies) String() string { return r.speaker.String() }

var _ speechOut = (*spokenReplies)(nil)
