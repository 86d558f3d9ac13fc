package sleep

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestForWaitsTheDuration(t *testing.T) {
	const d = 20 * time.Millisecond
	start := time.Now()
	if err := For(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	if got := time.Since(start); got < d {
		t.Errorf("For(%v) returned after %v", d, got)
	}
	stop := make(chan struct{})
	if err := ForOrStop(t.Context(), d, stop); err != nil {
		t.Errorf("ForOrStop with an open stop = %v, want nil", err)
	}
}

// An ended context or a closed stop cuts an hour's wait short, each with its own error.
func TestCutShort(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := For(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("For with an ended context = %v, want context.Canceled", err)
	}
	if err := ForOrStop(ctx, time.Hour, make(chan struct{})); !errors.Is(err, context.Canceled) {
		t.Errorf("ForOrStop with an ended context = %v, want context.Canceled", err)
	}
	stop := make(chan struct{})
	close(stop)
	if err := ForOrStop(t.Context(), time.Hour, stop); !errors.Is(err, ErrStopped) {
		t.Errorf("ForOrStop with a closed stop = %v, want ErrStopped", err)
	}
}
