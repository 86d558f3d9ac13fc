package hal_test

import (
	"context"
	"errors"
	"testing"

	"github.com/devicectl/devicectl/hal"
)

func TestShown(t *testing.T) {
	var l hal.Shown
	if got, err := l.Get(t.Context()); got != "" || err != nil {
		t.Errorf("zero Shown: %q, %v; want the zero value", got, err)
	}
	for _, step := range []struct {
		set     hal.Expression
		changed bool
	}{{hal.Smile, true}, {hal.Smile, false}, {hal.Idle, true}} {
		if changed := l.Set(step.set); changed != step.changed {
			t.Errorf("Set(%s) changed = %v, want %v", step.set, changed, step.changed)
		}
		if got, err := l.Get(t.Context()); got != step.set || err != nil {
			t.Errorf("Get after Set(%s) = %q, %v", step.set, got, err)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if got, err := l.Get(ctx); got != "" || !errors.Is(err, context.Canceled) {
		t.Errorf("Get with an ended context = %q, %v; want its error", got, err)
	}
}
