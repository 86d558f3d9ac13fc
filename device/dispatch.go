package device

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/devicectl/devicectl/tools"
)

// dispatcher runs the calls of the server and of Agent.Call. The line's read loop hands it the
// server's executes (see line.execute) and must never block on a tool: calls are admitted or
// refused at once and run on goroutines the dispatcher owns.
type dispatcher struct {
	registry atomic.Pointer[tools.Registry]   // swapped by Agent.SetRegistry
	settings atomic.Pointer[dispatchSettings] // swapped by a Restart

	mu        sync.Mutex
	resources map[string]chan struct{} // one-token semaphores, created on first use
	stopping  bool                     // the line is draining or down: the server's calls are refused
	closed    bool                     // the agent has stopped: every call is refused

	// running counts the admitted calls not yet answered; idle is closed while it is zero, and
	// made anew when a call is admitted to an idle dispatcher. Not a sync.WaitGroup: calls are
	// admitted while a drain waits (local calls), and a WaitGroup must not grow from zero
	// during a Wait.
	running int
	idle    chan struct{}
}

// dispatchSettings are the options calls run with. A call keeps the ones it was admitted with,
// so a Restart never changes them under a call still running.
type dispatchSettings struct {
	render      func(AIMessage)
	toolTimeout time.Duration
	onCall      func(CallReport) // nil: nobody listens
	log         *slog.Logger
	slots       chan struct{} // one token per call in flight; full means busy
}

// The dispatcher lives as long as the agent, across sessions and Restarts: a tool stuck past a
// drain still holds its hardware's semaphore, and a call on the next session must wait for it
// rather than drive the same part at the same time.
func newDispatcher(o *Options) *dispatcher {
	d := &dispatcher{resources: make(map[string]chan struct{}), idle: make(chan struct{})}
	close(d.idle)
	d.configure(o)
	return d
}

// configure takes o's settings and tools for the calls admitted from now on. The in-flight
// slots are kept unless the bound changed, so calls still running count against it.
func (d *dispatcher) configure(o *Options) {
	s := &dispatchSettings{
		render:      o.Render,
		toolTimeout: o.ToolTimeout,
		onCall:      o.OnCall,
		log:         o.Logger.With("component", "dispatch"),
	}
	if old := d.settings.Load(); old != nil && cap(old.slots) == o.MaxInFlight {
		s.slots = old.slots
	} else {
		s.slots = make(chan struct{}, o.MaxInFlight)
	}
	d.settings.Store(s)
	d.registry.Store(o.Registry)
}

// setRegistry makes reg the tools that calls from now on run.
func (d *dispatcher) setRegistry(reg *tools.Registry) { d.registry.Store(reg) }

// call is one admitted execute.
type call struct {
	tool  *tools.Tool
	input json.RawMessage
	reg   *tools.Registry   // the tools in force at admission
	set   *dispatchSettings // as admitted
	via   string            // who asked: ViaServer or ViaLocal
	start time.Time
	reply replier
	once  sync.Once // the single response
}

// replier sends a call's single answer to whoever asked: the server on the line, or a local
// caller (Agent.Call).
type replier interface {
	// result sends v. An error says it was not sent: errNotSent when the asker is gone, else
	// v did not marshal.
	result(ctx context.Context, v any) error
	fail(code int64, message, details string)
}

// errNotSent is a result whose asker is gone: the line closed, or the local caller gave up.
var errNotSent = errors.New("nobody to answer")

// accept validates a call and admits it, for the server (via ViaServer) or a local caller; the
// caller runs the call it returns, or answers the error: -32602 for invalid input, -32002 when
// the device is full or stopping.
func (d *dispatcher) accept(set *dispatchSettings, name string, input json.RawMessage, via string, reply replier) (*call, *CallError) {
	reg := d.registry.Load()
	tool, err := reg.Validate(name, input)
	if err != nil {
		details := err.Error()
		var pe *tools.ParamsError
		if errors.As(err, &pe) {
			details = pe.Details
		}
		return nil, &CallError{Code: CodeInvalidParams, Message: "Invalid params", Details: details}
	}
	if why := d.admit(set.slots, via == ViaLocal); why != "" {
		return nil, &CallError{Code: CodeBusy, Message: "device busy", Details: why}
	}
	c := &call{tool: tool, input: input, reg: reg, set: set, via: via, reply: reply}
	if set.onCall != nil {
		c.start = time.Now()
	}
	return c, nil
}

// admit takes an in-flight slot without waiting; a device that is full or stopping refuses at once
// rather than queueing behind calls the server may already have given up on.
// It returns why it refused, or "" when the call was admitted. A local call does not depend on
// the line, so only the agent's end refuses it; a drain in progress waits for it too.
func (d *dispatcher) admit(slots chan struct{}, local bool) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed || (d.stopping && !local) {
		return "the device is shutting down"
	}
	select {
	case slots <- struct{}{}:
		if d.running == 0 {
			d.idle = make(chan struct{})
		}
		d.running++
		return ""
	default:
		return fmt.Sprintf("%d calls already in flight", cap(slots))
	}
}

// run executes an admitted call and answers it exactly once: with the tool's result or error, with
// -32001 when the timeout fires first, or with -32603 if the tool panics. The slot and the
// resources stay held until the tool has really returned, so a stuck tool keeps its hardware and
// counts against the in-flight bound instead of being silently overrun. They are released before
// the answer goes out: a server that sends its next call on reading the answer finds room for it.
func (d *dispatcher) run(ctx context.Context, c *call) {
	defer d.done() // after the answer, so a drain waits for it to be sent
	log := c.set.log
	timeout := c.set.toolTimeout
	if c.tool.Timeout > 0 {
		timeout = c.tool.Timeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// The tool's context expires at the timeout; a tool that honours it returns, frees its slot and
	// is answered -32001 below. The timer is for a tool stuck where no context reaches (a hung bus
	// transfer): it answers for it a moment later, while the tool keeps its slot.
	timer := time.AfterFunc(timeout+timeoutGrace, func() {
		c.once.Do(func() { d.replyTimeout(c, timeout) })
	})
	defer timer.Stop()

	release, err := d.acquire(ctx, c.tool.Resources)
	if err != nil {
		// The deadline passed while waiting for the hardware. Answered here, not by the timer:
		// the deferred Stop would cancel it before it fires.
		<-c.set.slots
		c.once.Do(func() { d.replyTimeout(c, timeout) })
		return
	}
	if reg := d.registry.Load(); reg != c.reg {
		// The tools were replaced while this call waited for its hardware (a reload that reopened
		// it, see Agent.Hold): run the tool now in force, on the parts now open.
		if t, err := reg.Validate(c.tool.Name, c.input); err == nil {
			c.tool = t
		}
	}
	result, err := d.invoke(ctx, c)
	release()
	<-c.set.slots

	c.once.Do(func() {
		timer.Stop()
		switch {
		case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
			// The tool gave up because its deadline passed, just before the timer could say so.
			d.replyTimeout(c, timeout)
		case err == nil:
			rerr := c.reply.result(ctx, result)
			switch {
			case errors.Is(rerr, errNotSent):
				log.Debug("the asker left before the result could be sent", "tool", c.tool.Name, "via", c.via)
			case rerr != nil:
				// The result did not marshal: that is a bug in the tool, not a domain failure.
				log.Error("cannot send tool result", "tool", c.tool.Name, "err", rerr)
				c.reply.fail(CodeInternal, "Internal error", "")
				d.report(c, nil, CodeInternal, "Internal error")
			default:
				d.report(c, result, 0, "")
			}
		case errors.Is(err, errPanic):
			c.reply.fail(CodeInternal, "Internal error", "")
			d.report(c, nil, CodeInternal, "Internal error")
		default:
			log.Info("tool failed", "tool", c.tool.Name, "err", err, "via", c.via)
			c.reply.fail(CodeToolFailed, err.Error(), "")
			d.report(c, nil, CodeToolFailed, err.Error())
		}
	})
}

func (d *dispatcher) replyTimeout(c *call, timeout time.Duration) {
	c.set.log.Warn("tool timed out", "tool", c.tool.Name, "timeout", timeout, "via", c.via)
	msg := fmt.Sprintf("tool timed out after %s", timeout)
	c.reply.fail(CodeToolTimeout, msg, "")
	d.report(c, nil, CodeToolTimeout, msg)
}

// report tells OnCall how c was answered.
func (d *dispatcher) report(c *call, result any, code int64, message string) {
	if c.set.onCall == nil {
		return
	}
	c.set.onCall(CallReport{Tool: c.tool.Name, Via: c.via, Input: c.input, Result: result, Code: code, Message: message, Duration: time.Since(c.start)})
}

var errPanic = errors.New("tool panicked")

// timeoutGrace is how long past its deadline a tool may take to notice it before it is answered for.
const timeoutGrace = 100 * time.Millisecond

func (d *dispatcher) invoke(ctx context.Context, c *call) (result any, err error) {
	defer func() {
		if p := recover(); p != nil {
			c.set.log.Error("tool panicked", "tool", c.tool.Name, "panic", p, "stack", string(debug.Stack()))
			err = errPanic
		}
	}()
	return c.tool.Invoke(ctx, c.input)
}

// acquire takes the named resources in sorted order, so two calls that need the same pair can
// never hold one each and wait for the other.
func (d *dispatcher) acquire(ctx context.Context, names []string) (release func(), err error) {
	if len(names) == 0 {
		return func() {}, nil
	}
	names = slices.Clone(names)
	slices.Sort(names)
	names = slices.Compact(names)
	held := make([]chan struct{}, 0, len(names))
	release = func() {
		for _, sem := range held {
			<-sem
		}
	}
	for _, name := range names {
		sem := d.resource(name)
		select {
		case sem <- struct{}{}:
			held = append(held, sem)
		case <-ctx.Done():
			release()
			return nil, ctx.Err()
		}
	}
	return release, nil
}

func (d *dispatcher) resource(name string) chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	sem, ok := d.resources[name]
	if !ok {
		sem = make(chan struct{}, 1)
		d.resources[name] = sem
	}
	return sem
}

// stop refuses new calls until resume.
func (d *dispatcher) stop() {
	d.mu.Lock()
	d.stopping = true
	d.mu.Unlock()
}

// close refuses every call from now on, local ones included: the agent has stopped.
func (d *dispatcher) close() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
}

// resume takes calls again, on a new line.
func (d *dispatcher) resume() {
	d.mu.Lock()
	d.stopping = false
	d.mu.Unlock()
}

// done counts an admitted call as answered.
func (d *dispatcher) done() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.running--
	if d.running == 0 {
		close(d.idle)
	}
}

// wait blocks until every admitted call has returned or ctx is done, and reports whether all did.
func (d *dispatcher) wait(ctx context.Context) bool {
	d.mu.Lock()
	idle := d.idle
	d.mu.Unlock()
	select {
	case <-idle:
		return true
	case <-ctx.Done():
		return false
	}
}
