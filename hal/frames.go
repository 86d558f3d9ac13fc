package hal

import (
	"context"
	"fmt"
	"sync"
)

// Frames runs the frames of a face that draws on hardware it cannot read back (an LED strip, an
// OLED panel): one frame at a time, since a frame is a transfer on a shared bus, and it remembers
// the expression of the last frame that reached the hardware. Expression does not wait behind a
// frame being sent. The zero value is ready and holds "".
type Frames struct {
	mu    sync.Mutex // held while a frame is sent
	shown Shown
}

// Show sends e's frame with draw and records e once draw succeeds. It draws nothing, and returns
// ctx's error, if ctx has ended, before it waits for the frame ahead of it or after; and nothing
// if e is not Valid: an error wrapping ErrUnknownExpression, after face's name. draw's error is
// returned as it is.
func (f *Frames) Show(ctx context.Context, face fmt.Stringer, e Expression, draw func(Expression) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !e.Valid() {
		return fmt.Errorf("%s: expression %q: %w", face, e, ErrUnknownExpression)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := ctx.Err(); err != nil { // it may have waited for another frame
		return err
	}
	if err := draw(e); err != nil {
		return err
	}
	f.shown.Set(e)
	return nil
}

// Halt sends the frame that turns the face off with dark, and records Idle once dark succeeds.
// dark's error is returned as it is.
func (f *Frames) Halt(dark func() error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := dark(); err != nil {
		return err
	}
	f.shown.Set(Idle)
	return nil
}

// Expression returns the expression last shown, or ctx's error once ctx has ended.
func (f *Frames) Expression(ctx context.Context) (Expression, error) {
	return f.shown.Get(ctx)
}
