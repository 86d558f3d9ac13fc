package sim

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/devicectl/devicectl/hal"
)

// DefaultVolume is the volume of a Speaker whose options leave it zero.
const DefaultVolume = 50

// SpeakerOptions configure NewSpeaker. The zero value is ready to use.
type SpeakerOptions struct {
	// Volume is the initial volume in percent. 0 means DefaultVolume (call
	// SetVolume(ctx, 0) to start muted); values past 0..100 are clamped.
	Volume int
	// OnChange, if non-nil, is called with the new volume after each
	// successful SetVolume, and after a Halt that changed the volume.
	OnChange func(percent int)
	// Latency is how long SetVolume and Volume take, as a real amplifier's bus transfer or mixer
	// program does: each waits that long (or until its context is done) before it acts, and
	// changes wait for each other. 0: no wait. Halt never waits.
	Latency time.Duration
}

// Speaker is a simulated hal.Speaker.
type Speaker struct {
	onChange func(int)
	latency  time.Duration

	// setMu serialises changes together with their callbacks, so callbacks
	// arrive in the order of the changes; mu guards the state alone, so a
	// callback can still read it.
	setMu  sync.Mutex
	mu     sync.Mutex
	volume int
}

var _ hal.Speaker = (*Speaker)(nil)

// NewSpeaker returns a Speaker. opts may be nil.
func NewSpeaker(opts *SpeakerOptions) *Speaker {
	var o SpeakerOptions
	if opts != nil {
		o = *opts
	}
	if o.Volume == 0 {
		o.Volume = DefaultVolume
	}
	return &Speaker{onChange: o.OnChange, latency: max(o.Latency, 0), volume: min(max(o.Volume, 0), 100)}
}

// String returns "sim-speaker".
func (s *Speaker) String() string { return "sim-speaker" }

// Halt mutes the speaker. It calls OnChange only if the volume was not
// already 0, so halting twice notifies once.
func (s *Speaker) Halt() error {
	s.setMu.Lock()
	defer s.setMu.Unlock()
	s.mu.Lock()
	changed := s.volume != 0
	s.volume = 0
	s.mu.Unlock()
	if changed && s.onChange != nil {
		s.onChange(0)
	}
	return nil
}

// SetVolume sets the volume to percent, which must be in 0..100.
func (s *Speaker) SetVolume(ctx context.Context, percent int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if percent < 0 || percent > 100 {
		return fmt.Errorf("sim-speaker: volume %d not in 0..100: %w", percent, hal.ErrOutOfRange)
	}
	s.setMu.Lock()
	defer s.setMu.Unlock()
	if err := take(ctx, s.latency); err != nil {
		return err
	}
	s.mu.Lock()
	s.volume = percent
	s.mu.Unlock()
	if s.onChange != nil {
		s.onChange(percent)
	}
	return nil
}

// Volume returns the current volume.
func (s *Speaker) Volume(ctx context.Context) (int, error) {
	if err := take(ctx, s.latency); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.volume, nil
}
