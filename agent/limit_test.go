package agent_test

import (
	"context"
	"errors"
	"iter"
	"strings"
	"sync"
	"testing"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/internal/testing/leakcheck"
)

// TestStartedBeforePlanner: EventStarted comes while the planner is still thinking, so that a
// front door can answer at once; a turn refused before its planner runs yields only its error.
func TestStartedBeforePlanner(t *testing.T) {
	leakcheck.Check(t)
	release := make(chan struct{})
	a, _, url := setup(t, planFunc(func(ctx context.Context, tc agent.TurnContext) error {
		select {
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
		tc.Chunk("done")
		return nil
	}), nil)
	device(t, url, macA, nil)

	next, stop := iter.Pull(a.Turn(ctxFor(t), agent.Request{Text: "slow"}))
	defer stop()
	if e, ok := next(); !ok || e.Kind != agent.EventStarted {
		t.Fatalf("first event %v %v, want started while the planner waits", e.Kind, e.Err)
	}
	close(release)
	var rest []agent.Event
	for e, ok := next(); ok; e, ok = next() {
		rest = append(rest, e)
	}
	if got := kinds(rest); got != "chunk,final" {
		t.Fatalf("after started: %s, want chunk,final", got)
	}

	evs := collect(t, a, ctxFor(t), agent.Request{MAC: "11:22:33:44:55:66"})
	var choice *agent.DeviceChoiceError
	if len(evs) != 1 || !errors.As(evs[0].Err, &choice) {
		t.Fatalf("a turn on an unknown device: %s %v, want only its error", kinds(evs), last(evs).Err)
	}
}

// TestTurnLimit: past Options.MaxTurns a turn is refused at once with ErrTurnLimit naming the key
// and the limit; a finished or refused turn gives its slot back.
func TestTurnLimit(t *testing.T) {
	leakcheck.Check(t)
	release := make(chan struct{})
	a, _, url := setup(t, planFunc(func(ctx context.Context, tc agent.TurnContext) error {
		if tc.Request().Text == "block" {
			select {
			case <-release:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		tc.Chunk("ok")
		return nil
	}), &agent.Options{MaxTurns: 2})
	device(t, url, macA, nil)

	var wg sync.WaitGroup
	started := make(chan struct{}, 2)
	finals := make(chan agent.Event, 2)
	for range 2 {
		wg.Go(func() {
			var lastEv agent.Event
			for e := range a.Turn(ctxFor(t), agent.Request{Text: "block"}) {
				if e.Kind == agent.EventStarted {
					started <- struct{}{}
				}
				lastEv = e
			}
			finals <- lastEv
		})
	}
	<-started
	<-started

	// Two turns run: a third is refused, whoever asks, and the refusal says why and where.
	evs := collect(t, a, ctxFor(t), agent.Request{Text: "quick"})
	err := last(evs).Err
	if len(evs) != 1 || !errors.Is(err, agent.ErrTurnLimit) {
		t.Fatalf("third turn: %s %v, want only an error wrapping ErrTurnLimit", kinds(evs), err)
	}
	if msg := err.Error(); !strings.Contains(msg, "agent.limits.turns") || !strings.Contains(msg, "2 already") {
		t.Errorf("the refusal %q does not name the key and the limit", msg)
	}

	close(release)
	wg.Wait()
	for range 2 {
		if e := <-finals; e.Kind != agent.EventFinal {
			t.Errorf("a blocked turn ended with %v %v, want final", e.Kind, e.Err)
		}
	}
	// The slots are back: refused turns (a bad device) do not keep one either.
	for range 3 {
		collect(t, a, ctxFor(t), agent.Request{MAC: "11:22:33:44:55:66"})
	}
	for range 2 {
		if e := last(collect(t, a, ctxFor(t), agent.Request{Text: "quick"})); e.Kind != agent.EventFinal {
			t.Fatalf("after the turns ended: %v %v, want final", e.Kind, e.Err)
		}
	}
}

// TestTurnSlotFreeAtFinal: a turn gives its slot back before its final goes out, so that a caller
// that has its answer and asks again at once is not refused for its own finished turn.
func TestTurnSlotFreeAtFinal(t *testing.T) {
	leakcheck.Check(t)
	a, _, url := setup(t, planFunc(func(ctx context.Context, tc agent.TurnContext) error {
		tc.Chunk("ok")
		return nil
	}), &agent.Options{MaxTurns: 1})
	device(t, url, macA, nil)
	finals := 0
	for e := range a.Turn(ctxFor(t), agent.Request{Text: "first"}) {
		if e.Kind != agent.EventFinal {
			continue
		}
		finals++
		if next := last(collect(t, a, ctxFor(t), agent.Request{Text: "second"})); next.Kind != agent.EventFinal {
			t.Errorf("a turn asked for on the first's final: %v %v, want final", next.Kind, next.Err)
		}
	}
	if finals != 1 {
		t.Fatalf("%d finals, want 1", finals)
	}
}
