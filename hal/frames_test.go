package hal_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/devicectl/devicectl/hal"
)

type named string

func (n named) String() string { return string(n) }

func TestFramesRecordOnlyWhatWasDrawn(t *testing.T) {
	var f hal.Frames
	var drawn []hal.Expression
	draw := func(e hal.Expression) error { drawn = append(drawn, e); return nil }
	broken := errors.New("bus gone")
	fail := func(hal.Expression) error { return broken }

	if err := f.Show(t.Context(), named("face"), hal.Smile, draw); err != nil {
		t.Fatal(err)
	}
	if err := f.Show(t.Context(), named("face"), hal.Cry, fail); !errors.Is(err, broken) {
		t.Errorf("Show with a failing draw = %v, want its error as it is", err)
	}
	if err := f.Show(t.Context(), named("face"), "grin", draw); !errors.Is(err, hal.ErrUnknownExpression) || err.Error() != `face: expression "grin": hal: unknown expression` {
		t.Errorf("Show(grin) = %v, want an unknown-expression error naming the face", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := f.Show(ctx, named("face"), hal.Cry, draw); !errors.Is(err, context.Canceled) {
		t.Errorf("Show with an ended context = %v, want context.Canceled", err)
	}
	if got, err := f.Expression(t.Context()); got != hal.Smile || err != nil {
		t.Errorf("Expression = %q, %v; want smile, the last frame drawn", got, err)
	}
	if err := f.Halt(func() error { return broken }); !errors.Is(err, broken) {
		t.Errorf("Halt with a failing frame = %v", err)
	}
	if got, _ := f.Expression(t.Context()); got != hal.Smile {
		t.Errorf("Expression after a failed Halt = %q, want smile", got)
	}
	if err := f.Halt(func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.Expression(t.Context()); got != hal.Idle {
		t.Errorf("Expression after Halt = %q, want idle", got)
	}
	if len(drawn) != 1 || drawn[0] != hal.Smile {
		t.Errorf("drawn %q, want only smile", drawn)
	}
}

// A reader does not wait behind a frame being sent.
func TestFramesReaderDoesNotWait(t *testing.T) {
	var f hal.Frames
	sending, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- f.Show(t.Context(), named("face"), hal.Smile, func(hal.Expression) error {
			close(sending)
			<-release
			return nil
		})
	}()
	<-sending
	got, err := f.Expression(t.Context())
	close(release)
	if got != "" || err != nil {
		t.Errorf("Expression while the first frame is sent = %q, %v; want the zero value at once", got, err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got, _ := f.Expression(t.Context()); got != hal.Smile {
		t.Errorf("Expression = %q, want smile", got)
	}
}

// endsOnSecondLook is a context that is live when Show first looks and has ended when it looks
// again: one that ends while Show waits for the frame ahead of it.
type endsOnSecondLook struct {
	context.Context
	looks atomic.Int32
}

func (c *endsOnSecondLook) Err() error {
	if c.looks.Add(1) > 1 {
		return context.Canceled
	}
	return nil
}

func TestFramesNotSentOnceTheContextEndedWhileWaiting(t *testing.T) {
	var f hal.Frames
	ctx := &endsOnSecondLook{Context: t.Context()}
	err := f.Show(ctx, named("face"), hal.Smile, func(hal.Expression) error {
		t.Error("a frame whose context ended was drawn")
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Show = %v, want context.Canceled", err)
	}
	if got, _ := f.Expression(t.Context()); got != "" {
		t.Errorf("Expression = %q, want nothing shown", got)
	}
}
