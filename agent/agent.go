package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"time"

	"github.com/devicectl/devicectl/agent/hub"
	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
)

// Defaults for the zero values of Options.
const (
	DefaultTurnTimeout = 60 * time.Second
	DefaultHistoryLen  = 20 // exchanges kept per session
	maxSessions        = 1024
)

// ErrTurnTimeout is a turn that ran past Options.TurnTimeout; the error also wraps
// context.DeadlineExceeded.
var ErrTurnTimeout = errors.New("agent: the turn ran past its deadline")

// ErrTurnLimit is a turn refused because Options.MaxTurns turns were already running.
var ErrTurnLimit = errors.New("agent: too many turns are running")

// Options configure an Agent. New copies them; zero fields take the defaults.
type Options struct {
	// Hub is where the devices are; nil means none (local tools only).
	Hub *hub.Hub
	// Planner decides what a turn does. Required.
	Planner Planner
	// Local are the server's own tools (main_type local), run in process. A device tool of the
	// same name is hidden: the server's tools cannot be overridden by a device.
	Local *tools.Registry
	// TurnTimeout bounds a turn, tool calls included; 0 means DefaultTurnTimeout.
	TurnTimeout time.Duration
	// WaitForControl makes a device's control tools wait for the device's answer like query
	// tools. Off (the seed's rule), the planner is told {"status":"success"} at once.
	WaitForControl bool
	// HistoryLen is how many exchanges a session keeps for TurnContext.History; 0 means
	// DefaultHistoryLen, negative keeps none.
	HistoryLen int
	// Preface, when set, is asked at the start of each turn on a device what to say before the
	// planner's reply ("" for nothing): the reminders the device missed while it was away.
	Preface func(ctx context.Context, mac string) string
	// MaxTurns bounds the turns running at once, whichever front door started them
	// (agent.limits.turns); a turn past it is refused at once with an error wrapping
	// ErrTurnLimit. 0 means no limit.
	MaxTurns int
	// Logger receives the agent's logs; nil discards them.
	Logger *slog.Logger
}

// Agent runs turns: a request goes to the planner, which calls tools and streams a reply. Its
// methods are safe for concurrent use; turns run concurrently.
type Agent struct {
	opts    Options
	log     *slog.Logger
	history *history
	turns   chan struct{} // a slot per running turn, Options.MaxTurns of them; nil: no limit
}

// New returns an Agent.
func New(o *Options) (*Agent, error) {
	if o == nil || o.Planner == nil {
		return nil, errors.New("agent: Options.Planner is required")
	}
	a := &Agent{opts: *o}
	if a.opts.TurnTimeout <= 0 {
		a.opts.TurnTimeout = DefaultTurnTimeout
	}
	switch {
	case a.opts.HistoryLen == 0:
		a.opts.HistoryLen = DefaultHistoryLen
	case a.opts.HistoryLen < 0:
		a.opts.HistoryLen = 0
	}
	a.log = a.opts.Logger
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	a.log = a.log.With("component", "agent")
	a.history = newHistory(a.opts.HistoryLen, maxSessions)
	if a.opts.MaxTurns > 0 {
		a.turns = make(chan struct{}, a.opts.MaxTurns)
	}
	return a, nil
}

// MaxTurns is Options.MaxTurns: how many turns may run at once, 0 for no limit. Front doors
// that queue work of their own (a2a-go's executions) bound it by the same number.
func (a *Agent) MaxTurns() int { return a.opts.MaxTurns }

// acquire takes a turn slot; false when Options.MaxTurns turns are running.
func (a *Agent) acquire() bool {
	if a.turns == nil {
		return true
	}
	select {
	case a.turns <- struct{}{}:
		return true
	default:
		return false
	}
}

func (a *Agent) release() {
	if a.turns != nil {
		<-a.turns
	}
}

// Tools returns the tools a turn on mac may call: the device's, then the server's own. mac ""
// means the only registered device; with none or several, the server's own tools only.
func (a *Agent) Tools(mac string) []tools.Declaration {
	if mac == "" && a.opts.Hub != nil {
		if macs := a.opts.Hub.MACs(); len(macs) == 1 {
			mac = macs[0]
		}
	}
	return a.tools(mac)
}

// tools returns the device's tools (none for mac "") followed by the local ones; a device tool
// named like a local one is left out.
func (a *Agent) tools(mac string) []tools.Declaration {
	var local []*tools.Tool
	if a.opts.Local != nil {
		local = a.opts.Local.Tools()
	}
	var dev []tools.Declaration
	if mac != "" && a.opts.Hub != nil {
		if d, ok := a.opts.Hub.Device(mac); ok {
			dev = d.Tools
		}
	}
	out := make([]tools.Declaration, 0, len(dev)+len(local))
	for _, d := range dev {
		if a.isLocal(d.Name) {
			continue
		}
		out = append(out, d)
	}
	for _, t := range local {
		out = append(out, t.Declaration)
	}
	return out
}

func (a *Agent) isLocal(name string) bool {
	if a.opts.Local == nil {
		return false
	}
	_, ok := a.opts.Local.Lookup(name)
	return ok
}

// pick chooses the device of a turn (see the package documentation): the MAC asked for, else the
// only one registered. done is closed when that device's registration ends; mac "" (done nil) is a
// turn with the local tools only.
func (a *Agent) pick(asked string) (mac string, done <-chan struct{}, err error) {
	if asked != "" && a.opts.Hub != nil {
		if m, perr := protocol.ParseMAC(asked); perr == nil {
			if done, ok := a.opts.Hub.Done(m); ok {
				return m, done, nil
			}
		}
	}
	// The list of every device, sorted, only when the turn did not name a registered one.
	var macs []string
	if a.opts.Hub != nil {
		macs = a.opts.Hub.MACs()
	}
	if asked != "" {
		if len(macs) == 0 {
			return "", nil, fmt.Errorf("%w (asked for %s)", ErrNoDevice, asked)
		}
		return "", nil, &DeviceChoiceError{Asked: asked, MACs: macs}
	}
	switch len(macs) {
	case 0:
		if a.opts.Local != nil && len(a.opts.Local.Tools()) > 0 {
			return "", nil, nil
		}
		return "", nil, ErrNoDevice
	case 1:
		if done, ok := a.opts.Hub.Done(macs[0]); ok {
			return macs[0], done, nil
		}
		return "", nil, ErrNoDevice // it left meanwhile
	}
	return "", nil, &DeviceChoiceError{MACs: macs}
}

// Turn runs one turn when iterated: the events in order, EventStarted first unless the turn is
// refused at once, ending with exactly one EventFinal or EventError. Stopping the iteration early cancels the turn (its goroutines are waited for before
// the loop ends). A Seq runs its turn once; iterating it again yields only an EventError.
func (a *Agent) Turn(ctx context.Context, r Request) iter.Seq[Event] {
	ran := false
	return func(yield func(Event) bool) {
		if ran {
			yield(Event{Kind: EventError, Err: errors.New("agent: this turn has already run")})
			return
		}
		ran = true
		a.run(ctx, r, yield)
	}
}

// toolError turns a call's failure into what the contract promises a planner: a *ToolError for an
// answer with an error, ErrDeviceGone for a device that left.
func toolError(err error) error {
	var pe *tools.ParamsError
	var ce *hub.CallError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &pe):
		return &ToolError{Code: protocol.CodeInvalidParams, Message: "Invalid params", Details: pe.Details}
	case errors.As(err, &ce):
		return &ToolError{Code: ce.Code, Message: ce.Message, Details: ce.Details}
	case errors.Is(err, hub.ErrGone), errors.Is(err, hub.ErrNotRegistered), errors.Is(err, hub.ErrClosed):
		return fmt.Errorf("%w: %w", ErrDeviceGone, err)
	}
	return err
}

// successResult is what a control tool answers the planner without waiting (seed 002).
var successResult = json.RawMessage(`{"status":"success"}`)
