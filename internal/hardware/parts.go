package hardware

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/driverreg"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/speech"
)

// This file opens each part through its driver; the drivers are in hal/drivers' list, and doctor
// checks a new one with no more work.

// OpenSpeaker opens the speaker c names, sets its start-up volume and reads it back, so a part
// that is there but unusable fails now rather than at the server's first call. With keepLevel
// (doctor, beside a running service) a speaker that can be read keeps its level; a blind one (a
// MAX9744), which cannot, is still set.
func OpenSpeaker(ctx context.Context, c config.SpeakerConfig, env *driverreg.Env, keepLevel bool) (hal.Speaker, error) {
	drv := driverreg.Default.Speaker(c.Driver)
	if drv == nil {
		return nil, &PartError{Key: "hardware.speaker.driver", Err: fmt.Errorf("no driver %q (there are %v)", c.Driver, driverreg.Default.SpeakerNames())}
	}
	spk, err := drv.Open(ctx, c, env)
	if err != nil {
		return nil, partError("hardware.speaker", err)
	}
	if drv.Simulated {
		return spk, nil
	}
	// A known level to start from: the last stop muted the speaker (Halt), and a blind part cannot
	// be asked what it plays at.
	if !keepLevel || drv.Blind {
		if err := spk.SetVolume(ctx, c.Start); err != nil {
			return nil, &PartError{Key: "hardware.speaker", Err: fmt.Errorf("setting the start-up volume of %s: %w", spk, err)}
		}
	}
	if _, err := spk.Volume(ctx); err != nil {
		return nil, &PartError{Key: "hardware.speaker", Err: fmt.Errorf("reading the volume of %s: %w", spk, err)}
	}
	return spk, nil
}

// OpenFace opens the display c names; opening draws its first expression (idle).
func OpenFace(ctx context.Context, c config.FaceConfig, env *driverreg.Env) (hal.Face, error) {
	drv := driverreg.Default.Face(c.Driver)
	if drv == nil {
		return nil, &PartError{Key: "hardware.face.driver", Err: fmt.Errorf("no driver %q (there are %v)", c.Driver, driverreg.Default.FaceNames())}
	}
	f, err := drv.Open(ctx, c, env)
	if err != nil {
		return nil, partError("hardware.face", err)
	}
	return f, nil
}

// OpenSpeech returns the voice for AI replies, nil when speech is off.
func OpenSpeech(c config.SpeechConfig, lang string, log *slog.Logger) (Speech, error) {
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

var _ Speech = (*spokenReplies)(nil)
