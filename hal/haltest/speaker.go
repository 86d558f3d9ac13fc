package haltest

import (
	"context"
	"fmt"
	"sync"

	"github.com/devicectl/devicectl/hal"
)

// Speaker is a fake hal.Speaker.
type Speaker struct {
	// Name is what String returns; "" means "haltest-speaker".
	Name string
	// Level is the volume the fake holds: SetVolume stores it, Volume reads
	// it, Halt sets it to 0.
	Level int
	// ReadBack, if non-nil, maps Level to what Volume reports, to simulate
	// hardware that rounds to its own steps (e.g. 80 reads back as 79).
	ReadBack func(level int) int

	// Injected errors. A non-nil error is returned by its method, which then
	// changes nothing (the call is still recorded). An error is checked
	// before the context and before SetVolume's range check.
	SetVolumeErr error
	VolumeErr    error
	HaltErr      error

	mu    sync.Mutex
	calls []string
}

var _ hal.Speaker = (*Speaker)(nil)

// String returns Name, or "haltest-speaker".
func (s *Speaker) String() string {
	if s.Name == "" {
		return "haltest-speaker"
	}
	return s.Name
}

// Halt records "Halt()" and mutes, unless HaltErr is set.
func (s *Speaker) Halt() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, "Halt()")
	if s.HaltErr != nil {
		return s.HaltErr
	}
	s.Level = 0
	return nil
}

// SetVolume records "SetVolume(<percent>)" and stores percent, unless
// SetVolumeErr is set, ctx is done or percent is out of 0..100 (an error
// wrapping hal.ErrOutOfRange).
func (s *Speaker) SetVolume(ctx context.Context, percent int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, fmt.Sprintf("SetVolume(%d)", percent))
	if s.SetVolumeErr != nil {
		return s.SetVolumeErr
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if percent < 0 || percent > 100 {
		return fmt.Errorf("%s: volume %d not in 0..100: %w", s.String(), percent, hal.ErrOutOfRange)
	}
	s.Level = percent
	return nil
}

// Volume records "Volume()" and returns Level (through ReadBack if set),
// unless VolumeErr is set or ctx is done.
func (s *Speaker) Volume(ctx context.Context) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, "Volume()")
	if s.VolumeErr != nil {
		return 0, s.VolumeErr
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if s.ReadBack != nil {
		return s.ReadBack(s.Level), nil
	}
	return s.Level, nil
}

// Calls returns the calls made so far, in order, e.g.
// ["SetVolume(80)", "Volume()", "Halt()"]. The slice is a copy.
func (s *Speaker) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

// Current returns Level without recording a call, for assertions.
func (s *Speaker) Current() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Level
}
