// Package sleep is the wait for a duration that its caller can cut short: by the caller's
// context, or by a channel that a Halt closes. The timer is stopped when the wait ends early, so a
// cancelled wait leaves nothing behind.
package sleep

import (
	"context"
	"errors"
	"time"
)

// ErrStopped is what ForOrStop returns when its stop channel is closed first.
var ErrStopped = errors.New("sleep: stopped")

// For waits d, or until ctx is done and returns ctx's error.
func For(ctx context.Context, d time.Duration) error {
	return ForOrStop(ctx, d, nil)
}

// ForOrStop waits d, or until ctx is done (returning ctx's error) or stop is closed (returning
// ErrStopped). A nil stop is never closed.
func ForOrStop(ctx context.Context, d time.Duration, stop <-chan struct{}) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-stop:
		return ErrStopped
	}
}
