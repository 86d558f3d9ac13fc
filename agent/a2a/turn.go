package a2a

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"

	"github.com/devicectl/devicectl/agent"
)

// turn is a running agent turn whose first event has been read.
type turn struct {
	first agent.Event
	next  func() (agent.Event, bool)
	stop  func()
}

// errNoFinal is a turn whose events ended without EventFinal or EventError (a Runner bug).
var errNoFinal = errors.New("a2a: the turn ended without a reply")

// startTurn starts r and waits for its first event, so that a turn the agent refuses at once for
// want of a device is answered as a bad request before any task exists. The caller must call
// stop when done with a turn it got.
func startTurn(ctx context.Context, run Runner, r agent.Request) (*turn, error) {
	next, stop := iter.Pull(run.Turn(ctx, r))
	first, ok := next()
	if !ok {
		stop()
		return nil, errNoFinal
	}
	if first.Kind == agent.EventError {
		if _, isDevice := deviceDetails(first.Err); isDevice {
			stop()
			return nil, first.Err
		}
	}
	return &turn{first: first, next: next, stop: stop}, nil
}

// events yields the turn's events, the first one included.
func (t *turn) events() iter.Seq[agent.Event] {
	return func(yield func(agent.Event) bool) {
		if !yield(t.first) {
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
