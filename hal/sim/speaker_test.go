package sim_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/sim"
)

// recorder collects OnChange calls; safe for concurrent use.
type recorder[T any] struct {
	mu  sync.Mutex
	got []T
}

func (r *recorder[T]) record(v T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, v)
}

func (r *recorder[T]) calls() []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]T(nil), r.got...)
}

// within fails the test if fn does not return within a generous bound:
// the functions under test do not block, so only a deadlock trips it.
func within(t *testing.T, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("deadlock: call did not return")
	}
}

func TestNewSpeakerInitialVolume(t *testing.T) {
	tests := []struct {
		name string
		opts *sim.SpeakerOptions
		want int
	}{
		{"nil options", nil, sim.DefaultVolume},
		{"zero means default", &sim.SpeakerOptions{}, sim.DefaultVolume},
		{"given", &sim.SpeakerOptions{Volume: 30}, 30},
		{"max", &sim.SpeakerOptions{Volume: 100}, 100},
		{"clamped high", &sim.SpeakerOptions{Volume: 150}, 100},
		{"clamped low", &sim.SpeakerOptions{Volume: -5}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before sim.SpeakerOptions
			if tt.opts != nil {
				before = *tt.opts
			}
			s := sim.NewSpeaker(tt.opts)
			got, err := s.Volume(context.Background())
			if err != nil || got != tt.want {
				t.Errorf("Volume() = %d, %v; want %d, nil", got, err, tt.want)
			}
			if tt.opts != nil && tt.opts.Volume != before.Volume {
				t.Errorf("NewSpeaker changed the caller's options: Volume %d -> %d", before.Volume, tt.opts.Volume)
			}
		})
	}
}

func TestSpeakerSetVolume(t *testing.T) {
	tests := []struct {
		percent    int
		wantErr    error
		wantVolume int
		wantNotify []int
	}{
		{0, nil, 0, []int{0}},
		{1, nil, 1, []int{1}},
		{50, nil, 50, []int{50}}, // same as before: still a successful set
		{100, nil, 100, []int{100}},
		{-1, hal.ErrOutOfRange, 50, nil},
		{101, hal.ErrOutOfRange, 50, nil},
		{-1 << 31, hal.ErrOutOfRange, 50, nil},
	}
	for _, tt := range tests {
		var rec recorder[int]
		s := sim.NewSpeaker(&sim.SpeakerOptions{Volume: 50, OnChange: rec.record})
		err := s.SetVolume(context.Background(), tt.percent)
		if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
			t.Errorf("SetVolume(%d) = %v, want %v", tt.percent, err, tt.wantErr)
		}
		if got, _ := s.Volume(context.Background()); got != tt.wantVolume {
			t.Errorf("after SetVolume(%d): Volume() = %d, want %d", tt.percent, got, tt.wantVolume)
		}
		if got := rec.calls(); !equal(got, tt.wantNotify) {
			t.Errorf("after SetVolume(%d): OnChange calls %v, want %v", tt.percent, got, tt.wantNotify)
		}
	}
}

func TestSpeakerCancelledContext(t *testing.T) {
	var rec recorder[int]
	s := sim.NewSpeaker(&sim.SpeakerOptions{Volume: 40, OnChange: rec.record})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.SetVolume(ctx, 80); !errors.Is(err, context.Canceled) {
		t.Errorf("SetVolume(cancelled) = %v, want context.Canceled", err)
	}
	if _, err := s.Volume(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Volume(cancelled) = %v, want context.Canceled", err)
	}
	if got, _ := s.Volume(context.Background()); got != 40 {
		t.Errorf("a cancelled SetVolume changed the volume to %d", got)
	}
	if got := rec.calls(); len(got) != 0 {
		t.Errorf("a cancelled SetVolume notified %v", got)
	}
}

func TestSpeakerHalt(t *testing.T) {
	ctx := context.Background()
	var rec recorder[int]
	s := sim.NewSpeaker(&sim.SpeakerOptions{Volume: 70, OnChange: rec.record})
	if s.String() != "sim-speaker" {
		t.Errorf("String() = %q, want sim-speaker", s.String())
	}
	for range 2 {
		if err := s.Halt(); err != nil {
			t.Fatalf("Halt() = %v", err)
		}
		if got, _ := s.Volume(ctx); got != 0 {
			t.Errorf("after Halt: Volume() = %d, want 0 (muted)", got)
		}
	}
	if got := rec.calls(); !equal(got, []int{0}) {
		t.Errorf("OnChange calls after two Halts = %v, want [0]", got)
	}
	if err := s.SetVolume(ctx, 20); err != nil {
		t.Fatalf("SetVolume after Halt = %v", err)
	}
	if got, _ := s.Volume(ctx); got != 20 {
		t.Errorf("SetVolume after Halt: Volume() = %d, want 20", got)
	}
}

func TestSpeakerOnChangeMayRead(t *testing.T) {
	ctx := context.Background()
	var s *sim.Speaker
	var seen []int
	s = sim.NewSpeaker(&sim.SpeakerOptions{OnChange: func(int) {
		v, err := s.Volume(ctx) // would deadlock if called under the state lock
		if err != nil {
			t.Errorf("Volume() in OnChange: %v", err)
		}
		seen = append(seen, v)
	}})
	within(t, func() {
		_ = s.SetVolume(ctx, 33)
		_ = s.Halt()
	})
	if !equal(seen, []int{33, 0}) {
		t.Errorf("Volume() read inside OnChange = %v, want [33 0]", seen)
	}
}

// TestSpeakerConcurrent checks, under -race, that concurrent sets leave
// callbacks in the order of the changes: the last one reports the final
// state, and no callback overlaps another.
func TestSpeakerConcurrent(t *testing.T) {
	ctx := context.Background()
	var (
		rec    recorder[int]
		mu     sync.Mutex
		inside int
	)
	s := sim.NewSpeaker(&sim.SpeakerOptions{OnChange: func(p int) {
		mu.Lock()
		inside++
		n := inside
		mu.Unlock()
		if n != 1 {
			t.Errorf("%d OnChange calls at once", n)
		}
		rec.record(p)
		mu.Lock()
		inside--
		mu.Unlock()
	}})
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			if err := s.SetVolume(ctx, i*2); err != nil {
				t.Errorf("SetVolume(%d) = %v", i*2, err)
			}
			if _, err := s.Volume(ctx); err != nil {
				t.Errorf("Volume() = %v", err)
			}
		})
	}
	wg.Go(func() { _ = s.Halt() })
	wg.Wait()
	calls := rec.calls()
	if len(calls) < 50 {
		t.Fatalf("%d OnChange calls, want at least 50", len(calls))
	}
	if got, _ := s.Volume(ctx); calls[len(calls)-1] != got {
		t.Errorf("last OnChange(%d) but Volume() = %d", calls[len(calls)-1], got)
	}
}

func equal[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
