package haltest

import (
	"context"
	"fmt"
	"sync"

	"github.com/devicectl/devicectl/hal"
)

// Face is a fake hal.Face.
type Face struct {
	// Name is what String returns; "" means "haltest-face".
	Name string
	// Shown is the expression the fake holds: SetExpression stores it,
	// Expression reads it ("" reads as hal.Idle), Halt sets hal.Idle.
	Shown hal.Expression

	// Injected errors, as for Speaker.
	SetExpressionErr error
	ExpressionErr    error
	HaltErr          error

	mu    sync.Mutex
	calls []string
}

var _ hal.Face = (*Face)(nil)

// String returns Name, or "haltest-face".
func (f *Face) String() string {
	if f.Name == "" {
		return "haltest-face"
	}
	return f.Name
}

// Halt records "Halt()" and shows hal.Idle, unless HaltErr is set.
func (f *Face) Halt() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "Halt()")
	if f.HaltErr != nil {
		return f.HaltErr
	}
	f.Shown = hal.Idle
	return nil
}

// SetExpression records "SetExpression(<e>)" and stores e, unless
// SetExpressionErr is set, ctx is done or e is not Valid (an error wrapping
// hal.ErrUnknownExpression).
func (f *Face) SetExpression(ctx context.Context, e hal.Expression) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf("SetExpression(%s)", e))
	if f.SetExpressionErr != nil {
		return f.SetExpressionErr
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if !e.Valid() {
		return fmt.Errorf("%s: expression %q: %w", f.String(), e, hal.ErrUnknownExpression)
	}
	f.Shown = e
	return nil
}

// Expression records "Expression()" and returns Shown, unless
// ExpressionErr is set or ctx is done.
func (f *Face) Expression(ctx context.Context) (hal.Expression, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "Expression()")
	if f.ExpressionErr != nil {
		return "", f.ExpressionErr
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return f.current(), nil
}

// Calls returns the calls made so far, in order, e.g.
// ["SetExpression(smile)", "Expression()"]. The slice is a copy.
func (f *Face) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// Current returns the expression shown without recording a call, for
// assertions.
func (f *Face) Current() hal.Expression {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.current()
}

func (f *Face) current() hal.Expression {
	if f.Shown == "" {
		return hal.Idle
	}
	return f.Shown
}
