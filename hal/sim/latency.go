package sim

import (
	"context"
	"time"
)

// take waits d, the time a real part's transfer takes, or until ctx is done. With d zero it
// only checks ctx.
func take(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		t.Stop()
		return ctx.Err()
	}
}
