package mic

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/internal/sleep"
)

// SimOptions configure NewSim. The zero value is a real-time microphone in a silent room.
type SimOptions struct {
	// Fast delivers samples as fast as they are read, for tests.
	Fast bool
}

// Sim is a simulated microphone: silence, paced like a real one, into which Play mixes audio
// (a person speaking to the simulated device).
type Sim struct {
	fast bool

	mu      sync.Mutex
	queue   []int16 // what Play queued, heard before the silence resumes
	start   time.Time
	read    int64
	halted  bool
	stopped chan struct{}
	once    sync.Once
}

var _ hal.Microphone = (*Sim)(nil)

// NewSim returns a simulated microphone. opts may be nil.
func NewSim(opts *SimOptions) *Sim {
	s := &Sim{stopped: make(chan struct{})}
	if opts != nil {
		s.fast = opts.Fast
	}
	return s
}

// String returns "sim-microphone".
func (s *Sim) String() string { return "sim-microphone" }

// Play makes the microphone hear samples next, after what it was already given.
func (s *Sim) Play(samples []int16) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, samples...)
}

// Read fills p with what Play gave, then silence, at the pace of a real microphone.
func (s *Sim) Read(ctx context.Context, p []int16) (int, error) {
	s.mu.Lock()
	if s.halted {
		s.mu.Unlock()
		return 0, fmt.Errorf("sim-microphone: %w", hal.ErrHalted)
	}
	if s.start.IsZero() {
		s.start = time.Now()
	}
	due := s.start.Add(time.Duration(s.read+int64(len(p))) * time.Second / hal.SampleRate)
	s.read += int64(len(p))
	s.mu.Unlock()
	if wait := time.Until(due); !s.fast && wait > 0 {
		err := sleep.ForOrStop(ctx, wait, s.stopped)
		if errors.Is(err, sleep.ErrStopped) {
			return 0, fmt.Errorf("sim-microphone: %w", hal.ErrHalted)
		}
		if err != nil {
			return 0, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := copy(p, s.queue)
	s.queue = s.queue[n:]
	clear(p[n:])
	return len(p), nil
}

// Halt stops the microphone; Read then fails with hal.ErrHalted.
func (s *Sim) Halt() error {
	s.once.Do(func() { close(s.stopped) })
	s.mu.Lock()
	s.halted = true
	s.queue = nil
	s.mu.Unlock()
	return nil
}
