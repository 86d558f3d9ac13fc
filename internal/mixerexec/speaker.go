package mixerexec

import (
	"context"
	"fmt"
	"time"

	"github.com/devicectl/devicectl/hal"
)

// haltTimeout bounds Halt, which has no context: a speaker that cannot be
// muted within it is reported as an error rather than hanging shutdown.
const haltTimeout = 5 * time.Second

// Mixer is what one mixer program does for a Speaker: the runs that set,
// silence and read one control. Its methods are called one at a time.
type Mixer interface {
	// Set sets the control to percent (0..100) and turns it on, so the
	// level set is the level heard.
	Set(ctx context.Context, percent int) error
	// Mute silences the control: level 0 and, where it can, switched off.
	Mute(ctx context.Context) error
	// Read asks the program for the level the control plays at now, 0
	// when it is off, and slack: how far that may be from the percent last
	// set, for the mixer's own rounding.
	Read(ctx context.Context) (percent, slack int, err error)
}

// Speaker is a hal.Speaker on a Mixer: it checks the range, runs one
// operation at a time, reads every set back and words the errors. It is
// safe for concurrent use.
type Speaker struct {
	name  string
	mixer Mixer
	// turn is held for a whole operation, so a SetVolume's read-back sees
	// its own write.
	turn turn
}

var _ hal.Speaker = (*Speaker)(nil)

// NewSpeaker returns a Speaker called name (its String) on m.
func NewSpeaker(name string, m Mixer) *Speaker {
	return &Speaker{name: name, mixer: m, turn: newTurn()}
}

// String returns the name given to NewSpeaker.
func (s *Speaker) String() string { return s.name }

// Halt mutes the control. It is bounded by an internal time-out, having no
// context.
func (s *Speaker) Halt() error {
	ctx, cancel := context.WithTimeout(context.Background(), haltTimeout)
	defer cancel()
	if err := s.acquire(ctx); err != nil {
		return fmt.Errorf("%s: cannot mute: %w", s, err)
	}
	defer s.turn.give()
	if err := s.mixer.Mute(ctx); err != nil {
		return fmt.Errorf("%s: cannot mute: %w", s, err)
	}
	return nil
}

// SetVolume sets the control to percent and reads it back. It fails if the
// mixer did not take the value: the read-back may differ from percent only
// by the mixer's slack.
func (s *Speaker) SetVolume(ctx context.Context, percent int) error {
	if percent < 0 || percent > 100 {
		return fmt.Errorf("%s: volume %d not in 0..100: %w", s, percent, hal.ErrOutOfRange)
	}
	if err := s.acquire(ctx); err != nil {
		return err
	}
	defer s.turn.give()
	if err := s.mixer.Set(ctx, percent); err != nil {
		return fmt.Errorf("%s: cannot set the volume to %d%%: %w", s, percent, err)
	}
	got, slack, err := s.mixer.Read(ctx)
	if err != nil {
		return fmt.Errorf("%s: set the volume to %d%% but cannot read it back: %w", s, percent, err)
	}
	if got < percent-slack || got > percent+slack {
		return fmt.Errorf("%s: set the volume to %d%% but it reads back as %d%%", s, percent, got)
	}
	return nil
}

// Volume reads the control from the mixer.
func (s *Speaker) Volume(ctx context.Context) (int, error) {
	if err := s.acquire(ctx); err != nil {
		return 0, err
	}
	defer s.turn.give()
	v, _, err := s.mixer.Read(ctx)
	if err != nil {
		return 0, fmt.Errorf("%s: cannot read the volume: %w", s, err)
	}
	return v, nil
}

func (s *Speaker) acquire(ctx context.Context) error {
	if err := s.turn.take(ctx); err != nil {
		return fmt.Errorf("%s: %w", s, err)
	}
	return nil
}
