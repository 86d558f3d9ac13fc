// Package halconform checks what every hal driver promises whatever its hardware: a call with a
// cancelled context fails before it touches anything, a volume out of range is rejected, and
// concurrent setters and readers are safe (run under -race). A driver's test calls these on a
// driver it opened on its own fake or real hardware, then checks on that hardware what reached it:
// nothing, or the state the driver reports.
package halconform

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"

	"github.com/devicectl/devicectl/hal"
)

// FaceCancelled fails t unless SetExpression and Expression with a cancelled context return an
// error wrapping context.Canceled.
func FaceCancelled(t testing.TB, f hal.Face) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := f.SetExpression(ctx, hal.Smile); !errors.Is(err, context.Canceled) {
		t.Errorf("%s: SetExpression(cancelled) = %v, want context.Canceled", f, err)
	}
	if _, err := f.Expression(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("%s: Expression(cancelled) = %v, want context.Canceled", f, err)
	}
}

// FaceConcurrently runs, all at once, a setter of each expression and as many readers, each making
// rounds calls, and the alongside functions; it fails t on any error and returns when all are
// done. The race detector and the caller's check of the hardware afterwards tell whether f was
// safe for it.
func FaceConcurrently(t testing.TB, f hal.Face, rounds int, alongside ...func()) {
	t.Helper()
	ctx := context.Background()
	var wg sync.WaitGroup
	for _, e := range hal.Expressions() {
		wg.Go(func() {
			for range rounds {
				if err := f.SetExpression(ctx, e); err != nil {
					t.Errorf("%s: SetExpression(%s) = %v", f, e, err)
				}
			}
		})
		wg.Go(func() {
			for range rounds {
				if _, err := f.Expression(ctx); err != nil {
					t.Errorf("%s: Expression() = %v", f, err)
				}
			}
		})
	}
	for _, fn := range alongside {
		wg.Go(fn)
	}
	wg.Wait()
}

// outOfRange are volumes no speaker takes: just outside 0..100, a byte's worth, and the ends of
// int, which a careless conversion to a register value wraps into range.
var outOfRange = []int{-1, 101, 255, -256, -1000, math.MaxInt, math.MinInt}

// SpeakerOutOfRange fails t unless SetVolume rejects each volume outside 0..100 with an error
// wrapping hal.ErrOutOfRange.
func SpeakerOutOfRange(t testing.TB, s hal.Speaker) {
	t.Helper()
	for _, v := range outOfRange {
		if err := s.SetVolume(context.Background(), v); !errors.Is(err, hal.ErrOutOfRange) {
			t.Errorf("%s: SetVolume(%d) = %v, want an error wrapping hal.ErrOutOfRange", s, v, err)
		}
	}
}

// SpeakerCancelled fails t unless SetVolume and Volume with a cancelled context return an error
// wrapping context.Canceled.
func SpeakerCancelled(t testing.TB, s hal.Speaker) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.SetVolume(ctx, 50); !errors.Is(err, context.Canceled) {
		t.Errorf("%s: SetVolume(cancelled) = %v, want context.Canceled", s, err)
	}
	if _, err := s.Volume(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("%s: Volume(cancelled) = %v, want context.Canceled", s, err)
	}
}
