package device

import (
	"context"
	"fmt"
	"time"
)

// SetTestClock makes a read the time from now (session lengths, Check's bounds) and draw the
// back-off's jitter from rnd. Call it before Run.
func (a *Agent) SetTestClock(now func() time.Time, rnd func() float64) {
	a.now, a.rand = now, rnd
}

// WaitState waits until a is in state want, woken by each snapshot Run's goroutine publishes.
func (a *Agent) WaitState(ctx context.Context, want State) error {
	for {
		v := a.view.Load()
		if v.state == want {
			return nil
		}
		select {
		case <-v.changed:
		case <-ctx.Done():
			return fmt.Errorf("state %v, want %v: %w", v.state, want, ctx.Err())
		}
	}
}
