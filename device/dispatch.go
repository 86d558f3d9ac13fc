package device

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
)

// dispatcher runs the calls of the server and of Agent.Call. Calls are admitted, queued or refused
// at once (accept), never waiting for a tool. A call that starts at once with nothing ahead of it
// runs on the goroutine that asked: the line's reader, which a watch relieves of the reading if
// the call takes long (line_watch.go), or a local caller for an instant tool (tools.Tool.Inline).
// Every other call runs on worker goroutines the dispatcher owns.
//
// Who runs when is queue.go's: calls on the same part run one at a time in arrival order, at most
// maxInFlight run at once, and up to maxQueued wait. The deadlines of all calls are watched by one
// timer (queue_deadline.go), and calls run on reused goroutines (queue_worker.go).
type dispatcher struct {
	registry atomic.Pointer[tools.Registry]   // swapped by Agent.SetRegistry
	settings atomic.Pointer[dispatchSettings] // swapped by a Restart

	mu       sync.Mutex
	stopping bool // the line is draining or down: the server's calls are refused
	closed   bool // the agent has stopped: every call is refused

	// The scheduler's state (queue.go), guarded by mu.
	maxInFlight int                      // calls running at once
	maxQueued   int                      // admitted calls waiting to start; 0: none may wait
	seq         uint64                   // arrival order of calls and Holds
	parts       map[string]*part         // by resource name, created on first use
	ready       []*call                  // calls that own their parts and wait for a slot, by arrival
	inFlight    int                      // calls holding a slot: running, or stuck past their answer
	waiting     int                      // admitted calls not yet started
	startable   []*call                  // calls given a slot, to hand to workers once mu is released
	askers      map[context.Context]bool // the askers' contexts watched by watchAsker
	toolParts   map[*tools.Tool][]*part  // partsOf's, for the tools in force

	deadlines deadlineHeap // every admitted call not yet finished, by when it is due
	watch     *time.Timer  // fires at deadlines[0].due; nil until the first call
	watchAt   time.Time    // when watch fires; zero once it has fired
	expiring  bool         // expire is at work: it arms watch when done

	workers workerPool

	// unanswered counts the admitted calls not yet finished (waiting or running). idle is made by
	// the first wait while it is above zero and closed when it gets there: a busy line makes no
	// channel per call. Not a sync.WaitGroup: calls are admitted while a drain waits (local calls),
	// and a WaitGroup must not grow from zero during a Wait.
	unanswered int
	idle       chan struct{} // nil when nobody waits
}

// dispatchSettings are the options calls run with. A call keeps the ones it was admitted with,
// so a Restart never changes them under a call still running.
type dispatchSettings struct {
	render      func(protocol.AIMessage)
	toolTimeout time.Duration
	onCall      func(CallReport) // nil: nobody listens
	log         *slog.Logger
}

// The dispatcher lives as long as the agent, across sessions and Restarts: a tool stuck past a
// drain still owns its hardware, and a call on the next session must wait for it rather than
// drive the same part at the same time.
func newDispatcher(o *Options) *dispatcher {
	d := &dispatcher{parts: make(map[string]*part)}
	d.workers.init()
	d.configure(o)
	return d
}

// configure takes o's settings and tools for the calls admitted from now on. The bounds apply at
// once: calls already running count against a new MaxInFlight, and a larger one starts calls
// that waited for a slot.
func (d *dispatcher) configure(o *Options) {
	d.settings.Store(&dispatchSettings{
		render:      o.Render,
		toolTimeout: o.ToolTimeout,
		onCall:      o.OnCall,
		log:         o.Logger.With("component", "dispatch"),
	})
	d.registry.Store(o.Registry)
	d.mu.Lock()
	clear(d.toolParts)
	d.maxInFlight = max(o.MaxInFlight, 1)
	d.maxQueued = max(o.MaxQueued, 0)
	d.fill()
	start := d.takeStartable(make([]*call, 0, 4))
	d.mu.Unlock()
	d.launch(start)
}

// setRegistry makes reg the tools that calls from now on run.
func (d *dispatcher) setRegistry(reg *tools.Registry) {
	d.registry.Store(reg)
	d.mu.Lock()
	clear(d.toolParts) // the old tools' parts are looked up again if a call of theirs comes
	d.mu.Unlock()
}

// call is one admitted execute.
type call struct {
	claim // its place in its parts' queues

	name     string // the tool's, for answers and reports: tool may be replaced while they are made
	tool     *tools.Tool
	prepared *tools.Prepared // the tool and the input validation accepted
	input    json.RawMessage
	reg      *tools.Registry   // the tools in force at admission
	set      *dispatchSettings // as admitted
	via      string            // who asked: ViaServer or ViaLocal
	start    time.Time         // admission, when OnCall listens
	reply    replier
	once     sync.Once // the single response

	ctx      context.Context // the asker's: the line's, or the local caller's
	timeout  time.Duration
	deadline time.Time // admission plus timeout: waiting counts against it

	// The context its tool runs with, set when it starts (fill) unless the tool is instant:
	// the asker's, and cancelled by the deadline watcher once the deadline passes.
	runCtx callContext
	stop   context.CancelCauseFunc // cancels runCtx; nil for an instant tool

	// Guarded by dispatcher.mu.
	state   callState
	due     time.Time // when the deadline watcher must look at it next
	index   int       // in dispatcher.deadlines; -1 when not there
	expired bool      // running past its deadline: its context is cancelled, its answer due after the grace
}

// callContext is the context a call's tool runs with: the asker's, cancelled also when the call's
// deadline passes, like context.WithDeadline's, but by the deadline watcher's one timer instead
// of a timer per call. Its Err is context.DeadlineExceeded then; a context a tool derives from it
// reports context.Canceled, with context.DeadlineExceeded as its cause.
type callContext struct {
	ctx      context.Context // context.WithCancelCause of the asker's
	deadline time.Time
}

func (c *callContext) Done() <-chan struct{} { return c.ctx.Done() }
func (c *callContext) Value(key any) any     { return c.ctx.Value(key) }
func (c *callContext) Deadline() (time.Time, bool) {
	if d, ok := c.ctx.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

func (c *callContext) Err() error {
	err := c.ctx.Err()
	if err != nil && context.Cause(c.ctx) == context.DeadlineExceeded {
		return context.DeadlineExceeded
	}
	return err
}

// callState is where a call is in its life.
type callState uint8

const (
	waitingParts callState = iota // queued on a part another claim owns
	waitingSlot                   // owns its parts, in dispatcher.ready
	running                       // holds a slot; its tool runs (or has not yet returned)
	finished                      // answered and gone from every queue
)

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

// submit validates a call for the server (via ViaServer) or a local caller and admits it: it
// starts at once, or waits its turn, and is answered through reply. Or it is refused, and submit
// returns the error for the caller to answer: -32602 for invalid input, -32002 when the queue is
// full or the device is stopping. It never blocks on a tool that can wait, so the line's read loop
// may call it; an instant tool with nothing ahead of it runs in submit, before it returns.
// ctx is the asker's: cancelling it cancels the tool's context, and drops the call if it has not
// started yet.
func (d *dispatcher) submit(ctx context.Context, set *dispatchSettings, name string, input json.RawMessage, via string, reply replier) *CallError {
	own, refused := d.accept(ctx, set, name, input, via, reply, false)
	if own != nil {
		d.runHere(own)
	}
	return refused
}

// accept is submit, except that the call it admits is returned as own, not run, when admit says
// the caller may run it (mine: any call that starts at once; else an instant tool's). The caller
// must then run it, with runHere or run.
func (d *dispatcher) accept(ctx context.Context, set *dispatchSettings, name string, input json.RawMessage, via string, reply replier, mine bool) (own *call, refused *CallError) {
	reg := d.registry.Load()
	prepared, err := reg.Prepare(name, input)
	if err != nil {
		details := err.Error()
		var pe *tools.ParamsError
		if errors.As(err, &pe) {
			details = pe.Details
		}
		return nil, &CallError{Code: protocol.CodeInvalidParams, Message: "Invalid params", Details: details}
	}
	tool := prepared.Tool
	c := &call{name: tool.Name, tool: tool, prepared: prepared, input: input, reg: reg, set: set, via: via, reply: reply, ctx: ctx, index: -1}
	c.call = c
	c.timeout = set.toolTimeout
	if tool.Timeout > 0 {
		c.timeout = tool.Timeout
	}
	now := time.Now()
	c.deadline = now.Add(c.timeout)
	if set.onCall != nil {
		c.start = now
	}
	own, why := d.admit(c, mine)
	if why != "" {
		return nil, &CallError{Code: protocol.CodeBusy, Message: "device busy", Details: why}
	}
	return own, nil
}

// runHere runs c, which accept returned, on the caller's goroutine, and hands the call its end
// started, if any, to a worker.
func (d *dispatcher) runHere(c *call) {
	if next := d.run(c); next != nil {
		d.launch([]*call{next})
	}
}

// run executes a started call and answers it exactly once: with the tool's result or error, with
// -32001 when the deadline passes first, or with -32603 if the tool panics. The slot and the parts
// stay held until the tool has really returned, so a stuck tool keeps its hardware and counts
// against the in-flight bound instead of being silently overrun; the deadline watcher answers for
// it meanwhile. They are released before the answer goes out: a server that sends its next call on
// reading the answer finds room for it. run returns the next call for its worker to run, if any.
func (d *dispatcher) run(c *call) (next *call) {
	log := c.set.log
	var ctx context.Context = c.ctx
	if c.stop != nil {
		ctx = &c.runCtx
		defer c.stop(context.Canceled) // after the answer: a replier may still use ctx
	}
	if c.ctx.Err() != nil {
		// The asker left (the line closed, the local caller gave up) while the call waited: it is
		// not run, and its answer goes nowhere.
		next = d.finish(c)
		d.answerFail(c, protocol.CodeToolTimeout, "call cancelled before it ran")
		d.done()
		return next
	}
	if reg := d.registry.Load(); reg != c.reg {
		// The tools were replaced while this call waited for its hardware (a reload that reopened
		// it, see Agent.Hold): run the tool now in force, on the parts now open.
		if p, err := reg.Prepare(c.name, c.input); err == nil {
			c.tool, c.prepared = p.Tool, p
		}
	}
	result, err := d.invoke(ctx, c)
	timedOut := err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded)
	next = d.finish(c)
	defer d.done() // after the answer, so a drain waits for it to be sent

	c.once.Do(func() {
		switch {
		case timedOut:
			// The tool gave up because its deadline passed, before the watcher could say so.
			d.replyTimeout(c)
		case err == nil:
			rerr := c.reply.result(ctx, result)
			switch {
			case errors.Is(rerr, errNotSent):
				log.Debug("the asker left before the result could be sent", "tool", c.name, "via", c.via)
			case rerr != nil:
				// The result did not marshal: that is a bug in the tool, not a domain failure.
				log.Error("cannot send tool result", "tool", c.name, "err", rerr)
				c.reply.fail(protocol.CodeInternalError, "Internal error", "")
				d.report(c, nil, protocol.CodeInternalError, "Internal error")
			default:
				d.report(c, result, 0, "")
			}
		case errors.Is(err, errPanic):
			c.reply.fail(protocol.CodeInternalError, "Internal error", "")
			d.report(c, nil, protocol.CodeInternalError, "Internal error")
		default:
			log.Info("tool failed", "tool", c.name, "err", err, "via", c.via)
			c.reply.fail(protocol.CodeServerError, err.Error(), "")
			d.report(c, nil, protocol.CodeServerError, err.Error())
		}
	})
	return next
}

// answerFail answers c with an error once, and reports it.
func (d *dispatcher) answerFail(c *call, code int64, message string) {
	c.once.Do(func() {
		c.reply.fail(code, message, "")
		d.report(c, nil, code, message)
	})
}

// answerSuperseded answers c, which never ran, with a success that says so.
func (d *dispatcher) answerSuperseded(c *call) {
	c.once.Do(func() {
		res := protocol.ExecuteResult{Status: protocol.StatusSuperseded, Message: fmt.Sprintf("not run: a later %s call replaced it before it started", c.name)}
		if err := c.reply.result(c.ctx, res); err == nil {
			d.report(c, res, 0, "")
		}
	})
}

func (d *dispatcher) replyTimeout(c *call) {
	c.set.log.Warn("tool timed out", "tool", c.name, "timeout", c.timeout, "via", c.via)
	msg := fmt.Sprintf("tool timed out after %s", c.timeout)
	c.reply.fail(protocol.CodeToolTimeout, msg, "")
	d.report(c, nil, protocol.CodeToolTimeout, msg)
}

// report tells OnCall how c was answered.
func (d *dispatcher) report(c *call, result any, code int64, message string) {
	if c.set.onCall == nil {
		return
	}
	c.set.onCall(CallReport{Tool: c.name, Via: c.via, Input: c.input, Result: result, Code: code, Message: message, Duration: time.Since(c.start)})
}

var errPanic = errors.New("tool panicked")

// timeoutGrace is how long past its deadline a tool may take to notice it before it is answered for.
const timeoutGrace = 100 * time.Millisecond

func (d *dispatcher) invoke(ctx context.Context, c *call) (result any, err error) {
	defer func() {
		if p := recover(); p != nil {
			c.set.log.Error("tool panicked", "tool", c.name, "panic", p, "stack", string(debug.Stack()))
			err = errPanic
		}
	}()
	return c.prepared.Invoke(ctx)
}

// stop refuses new calls until resume.
func (d *dispatcher) stop() {
	d.mu.Lock()
	d.stopping = true
	d.mu.Unlock()
}

// close refuses every call from now on, local ones included: the agent has stopped. Idle workers
// exit; busy ones exit once their call returns.
func (d *dispatcher) close() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	d.workers.close()
}

// resume takes calls again, on a new line.
func (d *dispatcher) resume() {
	d.mu.Lock()
	d.stopping = false
	d.mu.Unlock()
}

// done counts an admitted call as finished: answered, and its tool returned or never run.
func (d *dispatcher) done() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.unanswered--
	if d.unanswered == 0 && d.idle != nil {
		close(d.idle)
		d.idle = nil
	}
}

// wait blocks until every admitted call has finished or ctx is done, and reports whether all did.
func (d *dispatcher) wait(ctx context.Context) bool {
	d.mu.Lock()
	if d.unanswered == 0 {
		d.mu.Unlock()
		return true
	}
	if d.idle == nil {
		d.idle = make(chan struct{})
	}
	idle := d.idle
	d.mu.Unlock()
	select {
	case <-idle:
		return true
	case <-ctx.Done():
		return false
	}
}
