package sim

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/devicectl/devicectl/hal"
)

// FaceOptions configure NewFace. The zero value is ready to use.
type FaceOptions struct {
	// Expression is the initial expression. "" means hal.Idle; an
	// expression that is not Valid also means hal.Idle.
	Expression hal.Expression
	// OnChange, if non-nil, is called with the new expression after each
	// successful SetExpression, and after a Halt that changed it.
	OnChange func(hal.Expression)
	// Latency is how long SetExpression and Expression take, as a real display's bus transfer
	// does; see SpeakerOptions.Latency.
	Latency time.Duration
}

// Face is a simulated hal.Face.
type Face struct {
	onChange func(hal.Expression)
	latency  time.Duration

	// setMu serialises changes together with their callbacks, as Speaker's
	// does; expr guards the expression alone, so a callback can read it.
	setMu sync.Mutex
	expr  hal.Shown
}

var _ hal.Face = (*Face)(nil)

// NewFace returns a Face. opts may be nil.
func NewFace(opts *FaceOptions) *Face {
	var o FaceOptions
	if opts != nil {
		o = *opts
	}
	if !o.Expression.Valid() {
		o.Expression = hal.Idle
	}
	f := &Face{onChange: o.OnChange, latency: max(o.Latency, 0)}
	f.expr.Set(o.Expression)
	return f
}

// String returns "sim-face".
func (f *Face) String() string { return "sim-face" }

// Halt shows hal.Idle. It calls OnChange only if the expression was not
// already Idle, so halting twice notifies once.
func (f *Face) Halt() error {
	f.setMu.Lock()
	defer f.setMu.Unlock()
	changed := f.expr.Set(hal.Idle)
	if changed && f.onChange != nil {
		f.onChange(hal.Idle)
	}
	return nil
}

// SetExpression shows e, which must be Valid.
func (f *Face) SetExpression(ctx context.Context, e hal.Expression) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !e.Valid() {
		return fmt.Errorf("sim-face: expression %q: %w", e, hal.ErrUnknownExpression)
	}
	f.setMu.Lock()
	defer f.setMu.Unlock()
	if err := take(ctx, f.latency); err != nil {
		return err
	}
	f.expr.Set(e)
	if f.onChange != nil {
		f.onChange(e)
	}
	return nil
}

// Expression returns the expression shown.
func (f *Face) Expression(ctx context.Context) (hal.Expression, error) {
	if err := take(ctx, f.latency); err != nil {
		return "", err
	}
	return f.expr.Get(ctx)
}
