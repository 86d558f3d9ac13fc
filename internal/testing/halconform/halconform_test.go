package halconform

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/haltest"
)

// recorder is a testing.TB that keeps the failures a check reports instead of failing the test.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) failures() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.errors
}

// careless is a driver that ignores its context, takes any volume and fails every set of an
// expression other than idle, as a broken driver might.
type careless struct {
	mu    sync.Mutex
	level int
}

func (c *careless) String() string { return "careless" }
func (c *careless) Halt() error    { return nil }
func (c *careless) SetVolume(_ context.Context, p int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.level = p
	return nil
}
func (c *careless) Volume(context.Context) (int, error) { return c.level, nil }
func (c *careless) SetExpression(_ context.Context, e hal.Expression) error {
	if e != hal.Idle {
		return errors.New("busy")
	}
	return nil
}
func (c *careless) Expression(context.Context) (hal.Expression, error) { return hal.Idle, nil }

func TestConformingDriversPass(t *testing.T) {
	f := &haltest.Face{}
	FaceCancelled(t, f)
	halted := false
	FaceConcurrently(t, f, 3, func() { halted = f.Halt() == nil })
	if !halted {
		t.Error("the function alongside did not run")
	}
	// Each setter and each reader made its rounds, the cancelled calls are recorded too.
	if got, want := len(f.Calls()), 2+2*3*len(hal.Expressions())+1; got != want {
		t.Errorf("the face saw %d calls, want %d", got, want)
	}
	s := &haltest.Speaker{Level: 30}
	SpeakerOutOfRange(t, s)
	SpeakerCancelled(t, s)
	if s.Level != 30 {
		t.Errorf("the checks left the speaker at %d, want 30", s.Level)
	}
}

func TestBrokenDriversFail(t *testing.T) {
	c := &careless{}
	checks := []struct {
		name  string
		run   func(t testing.TB)
		count int
	}{
		{"FaceCancelled", func(t testing.TB) { FaceCancelled(t, c) }, 2},
		{"FaceConcurrently", func(t testing.TB) { FaceConcurrently(t, c, 2) }, 2 * (len(hal.Expressions()) - 1)},
		{"SpeakerOutOfRange", func(t testing.TB) { SpeakerOutOfRange(t, c) }, len(outOfRange)},
		{"SpeakerCancelled", func(t testing.TB) { SpeakerCancelled(t, c) }, 2},
	}
	for _, tt := range checks {
		r := &recorder{TB: t}
		tt.run(r)
		if got := r.failures(); len(got) != tt.count {
			t.Errorf("%s on a broken driver reported %d failures, want %d: %q", tt.name, len(got), tt.count, got)
		}
	}
}
