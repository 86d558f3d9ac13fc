package a2a

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"

	"github.com/devicectl/devicectl/agent"
)

// turn is a running agent turn the agent accepted.
type turn struct {
	first *agent.Event // read to learn the turn was accepted, still to be yielded; nil: none
	next  func() (agent.Event, bool)
	stop  func()
}

// errNoFinal is a turn whose events ended without EventFinal or EventError (a Runner bug).
var errNoFinal = errors.New("a2a: the turn ended without a reply")

// startTurn starts r and waits for its first event, so that a turn the agent refuses at once
// (for want of a device, or past the turn limit) is answered as an error before any task exists.
// *agent.Agent yields EventStarted at once for a turn it accepted, so this does not wait for the
// planner; a Runner that does not is waited for until its first event. The caller must call stop
// when done with a turn it got.
func startTurn(ctx context.Context, run Runner, r agent.Request) (*turn, error) {
	next, stop := iter.Pull(run.Turn(ctx, r))
	first, ok := next()
	if !ok {
		stop()
		return nil, errNoFinal
	}
	switch {
	case first.Kind == agent.EventStarted:
		return &turn{next: next, stop: stop}, nil
	case first.Kind == agent.EventError && refused(first.Err):
		stop()
		return nil, first.Err
	}
	return &turn{first: &first, next: next, stop: stop}, nil
}

// refused reports whether a turn's error is the agent refusing it before it ran: no such device,
// or too many turns.
func refused(err error) bool {
	_, isDevice := deviceDetails(err)
	return isDevice || errors.Is(err, agent.ErrTurnLimit)
}

// events yields the turn's events after EventStarted.
func (t *turn) events() iter.Seq[agent.Event] {
	return func(yield func(agent.Event) bool) {
		if t.first != nil && !yield(*t.first) {
			return
		}
		for {
			ev, ok := t.next()
			if !ok || !yield(ev) {
				return
			}
		}
	}
}

// turnLimitDetails is data.details of a turn refused past the turn limit.
func turnLimitDetails(limit int) string {
	return fmt.Sprintf("Too many turns are running: %d at once is the most agent.limits.turns allows; try again when one has finished", limit)
}

// deviceDetails says what is wrong with the device choice of a turn that failed for it, as
// data.details of a -32602; ok is false for any other error.
func deviceDetails(err error) (details string, ok bool) {
	var choice *agent.DeviceChoiceError
	switch {
	case errors.As(err, &choice):
		if choice.Asked == "" {
			return "Several devices are registered; name one in metadata.mac: " + strings.Join(choice.MACs, ", "), true
		}
		return fmt.Sprintf("No device %s is registered; registered: %s", choice.Asked, strings.Join(choice.MACs, ", ")), true
	case errors.Is(err, agent.ErrNoDevice):
		return "No device is registered with the server; connect one first", true
	}
	return "", false
}

// metaString reads a string from the first of the metadata maps that has the key. A key with a
// value that is not a string is an error, so that a typo does not silently pick another device.
func metaString(key string, maps ...map[string]any) (string, error) {
	for _, m := range maps {
		v, ok := m[key]
		if !ok || v == nil {
			continue
		}
		s, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("metadata.%s must be a string, got %T", key, v)
		}
		return s, nil
	}
	return "", nil
}

// turns are the turns in flight, of every door, by task id: a task runs one turn at a time,
// tasks/cancel and CancelTask stop it, and Close stops them all and waits.
type turns struct {
	mu     sync.Mutex
	byID   map[string]*runningTurn
	closed bool           // close was called: no new turns
	wg     sync.WaitGroup // one per turn in flight; close waits
}

type runningTurn struct {
	owner    any // what claimed the task: its execution
	cancelFn context.CancelFunc
	done     chan struct{} // closed when the turn's outcome is stored
	mu       sync.Mutex
	stopped  bool // a cancel asked
}

// errTurnBusy is a message to a task whose turn still runs.
var errTurnBusy = errors.New("a2a: the task is still working; wait for it or cancel it")

func (r *runningTurn) canceled() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stopped
}

func newTurns() *turns { return &turns{byID: make(map[string]*runningTurn)} }

// start claims the task id for owner's turn, which cancel stops: errTurnBusy while another runs
// on it, errClosing after close.
func (ts *turns) start(id string, owner any, cancel context.CancelFunc) (*runningTurn, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.closed {
		return nil, errClosing
	}
	if _, busy := ts.byID[id]; busy {
		return nil, fmt.Errorf("task %s: %w", id, errTurnBusy)
	}
	run := &runningTurn{owner: owner, cancelFn: cancel, done: make(chan struct{})}
	ts.byID[id] = run
	ts.wg.Add(1)
	return run, nil
}

// finish ends owner's claim on the task id, if it has one.
func (ts *turns) finish(id string, owner any) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	run := ts.byID[id]
	if run == nil || run.owner != owner {
		return
	}
	delete(ts.byID, id)
	close(run.done)
	ts.wg.Done()
}

// running reports whether a turn runs on the task.
func (ts *turns) running(id string) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.byID[id] != nil
}

// closing reports whether close was called.
func (ts *turns) closing() bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.closed
}

// cancel stops the task's turn, if one runs.
func (ts *turns) cancel(id string) {
	ts.mu.Lock()
	run := ts.byID[id]
	ts.mu.Unlock()
	if run == nil {
		return
	}
	run.mu.Lock()
	run.stopped = true
	run.mu.Unlock()
	run.cancelFn()
}

// close stops every turn, refuses new ones and waits until the outcomes of those running are
// stored.
func (ts *turns) close() {
	ts.mu.Lock()
	ts.closed = true
	for _, run := range ts.byID {
		run.cancelFn()
	}
	ts.mu.Unlock()
	ts.wg.Wait()
}
