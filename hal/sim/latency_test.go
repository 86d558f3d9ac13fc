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

// A part with a latency takes it on every read and change, its changes one after another, as a
// real part on a bus does.
func TestLatencyTaken(t *testing.T) {
	const latency = 20 * time.Millisecond
	ctx := context.Background()
	s := sim.NewSpeaker(&sim.SpeakerOptions{Latency: latency})
	f := sim.NewFace(&sim.FaceOptions{Latency: latency})
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for _, v := range []int{10, 20} {
		wg.Go(func() { errs <- s.SetVolume(ctx, v) })
	}
	for _, e := range []hal.Expression{hal.Smile, hal.Cry} {
		wg.Go(func() { errs <- f.SetExpression(ctx, e) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// Two changes of each part, in turn: at least twice the latency.
	if took := time.Since(start); took < 2*latency {
		t.Errorf("two changes of each part took %v; want at least %v (one after the other)", took, 2*latency)
	}
	start = time.Now()
	if _, err := s.Volume(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Expression(ctx); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 2*latency {
		t.Errorf("reading both parts took %v; want at least %v", took, 2*latency)
	}
}

// A call whose context ends during the latency returns its error and changes nothing; Halt
// does not wait.
func TestLatencyCancelled(t *testing.T) {
	var volumes recorder[int]
	var faces recorder[hal.Expression]
	s := sim.NewSpeaker(&sim.SpeakerOptions{Volume: 30, OnChange: volumes.record, Latency: time.Hour})
	f := sim.NewFace(&sim.FaceOptions{Expression: hal.Smile, OnChange: faces.record, Latency: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := s.SetVolume(ctx, 80); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("SetVolume past its deadline: %v, want %v", err, context.DeadlineExceeded)
	}
	if err := f.SetExpression(ctx, hal.Cry); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("SetExpression past its deadline: %v, want %v", err, context.DeadlineExceeded)
	}
	if _, err := s.Volume(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Volume past its deadline: %v, want %v", err, context.DeadlineExceeded)
	}
	if _, err := f.Expression(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Expression past its deadline: %v, want %v", err, context.DeadlineExceeded)
	}
	within(t, func() {
		if err := s.Halt(); err != nil {
			t.Error(err)
		}
		if err := f.Halt(); err != nil {
			t.Error(err)
		}
	})
	// Halt reports the change from the state the failed calls left: the first ones.
	if got := volumes.calls(); len(got) != 1 || got[0] != 0 {
		t.Errorf("speaker changes %v, want only Halt's [0]", got)
	}
	if got := faces.calls(); len(got) != 1 || got[0] != hal.Idle {
		t.Errorf("face changes %v, want only Halt's [%s]", got, hal.Idle)
	}
}
