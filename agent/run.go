package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
)

// eventBuffer is how many events a turn's goroutines may get ahead of the caller reading them.
const eventBuffer = 32

// turn is one running turn, and the TurnContext its planner sees.
type turn struct {
	a       *Agent
	req     Request // MAC resolved: "" for a turn with local tools only
	history []Exchange
	tools   []tools.Declaration
	ctx     context.Context // the planner's: ends at the deadline, on a device drop or an abort

	events chan Event
	stop   chan struct{} // closed when nobody reads events any more

	mu        sync.Mutex // orders the reply: what the device gets, and the events
	chunks    strings.Builder
	planned   bool // the planner returned without error
	finalSent bool

	bg sync.WaitGroup // control calls answered at once, whose device answer is still awaited
}

var _ TurnContext = (*turn)(nil)

// run runs a turn and yields its events; see Turn.
func (a *Agent) run(ctx context.Context, r Request, yield func(Event) bool) {
	if !a.acquire() {
		a.log.Warn("turn refused: the turn limit is reached", "limit", a.opts.MaxTurns, "key", "agent.limits.turns")
		yield(Event{Kind: EventError, Err: fmt.Errorf("%w: %d already, the most agent.limits.turns allows; try again when one has finished", ErrTurnLimit, a.opts.MaxTurns)})
		return
	}
	// The slot is given back before the terminal event goes out, by then the turn's goroutines
	// have ended: a caller that has its answer and sends again at once finds it free.
	release := sync.OnceFunc(a.release)
	defer release()
	mac, deviceDone, err := a.pick(r.MAC)
	if err != nil {
		a.log.Info("turn refused", "mac", r.MAC, "err", err)
		yield(Event{Kind: EventError, Err: err})
		return
	}
	r.MAC = mac
	if !yield(Event{Kind: EventStarted}) {
		return
	}
	timeout := fmt.Errorf("%w (%v): %w", ErrTurnTimeout, a.opts.TurnTimeout, context.DeadlineExceeded)
	tctx, cancelTurn := context.WithTimeoutCause(ctx, a.opts.TurnTimeout, timeout)
	defer cancelTurn()
	pctx, cancelPlan := context.WithCancelCause(tctx)
	defer cancelPlan(nil)

	t := &turn{
		a:       a,
		req:     r,
		history: a.history.get(r.SessionID),
		tools:   a.tools(mac),
		ctx:     pctx,
		events:  make(chan Event, eventBuffer),
		stop:    make(chan struct{}),
	}
	var planErr error
	planDone := make(chan struct{})
	go func() {
		defer close(planDone)
		if a.opts.Preface != nil && mac != "" {
			if p := a.opts.Preface(pctx, mac); p != "" {
				if last := p[len(p)-1]; last < utf8.RuneSelf && last != ' ' {
					p += " " // an English sentence before the reply's first
				}
				t.Chunk(p)
			}
		}
		planErr = t.plan()
	}()
	// bgDone is closed once the control calls the planner did not wait for have ended; it is
	// watched only after the planner returned, when no new ones can start.
	bgDone := make(chan struct{})
	bgWatch := false
	watchBackground := func() {
		if !bgWatch {
			bgWatch = true
			go func() { t.bg.Wait(); close(bgDone) }()
		}
	}

	// end finishes the turn: the planner and the control calls are cancelled (unless they are done)
	// and waited for, then the terminal event goes out. Events they emitted until then are still
	// yielded first, in order, while the caller reads; a nil terminal means the caller stopped.
	end := func(terminal *Event) {
		// The planner's calls still pending fail with the turn's own cause (the device gone, the
		// deadline), not a generic abort, so what a planner sees agrees with the turn's error.
		if terminal != nil && terminal.Err != nil {
			cancelPlan(terminal.Err)
		} else {
			cancelPlan(errAborted)
		}
		reading := terminal != nil
		if !reading {
			close(t.stop)
		}
		planLeft := (<-chan struct{})(planDone)
		var bgLeft <-chan struct{}
		for planLeft != nil || bgLeft != nil {
			select {
			case e := <-t.events:
				if reading && !yield(e) {
					reading = false
					close(t.stop)
				}
			case <-planLeft:
				planLeft = nil
				watchBackground()
				bgLeft = bgDone
			case <-bgLeft:
				bgLeft = nil
			}
		}
		if reading {
			close(t.stop)
			for reading && len(t.events) > 0 {
				reading = yield(<-t.events)
			}
		}
		if !isGone(deviceDone) {
			t.finishDevice()
		}
		if reading {
			release()
			yield(*terminal)
		}
	}
	replied := false // the planner succeeded and the device has its final
	failure := func() *Event {
		switch {
		case isGone(deviceDone):
			return &Event{Kind: EventError, Err: fmt.Errorf("%w: %s", ErrDeviceGone, mac)}
		case tctx.Err() != nil && !replied:
			return &Event{Kind: EventError, Err: context.Cause(tctx)}
		case planErr != nil:
			return &Event{Kind: EventError, Err: planErr}
		}
		return nil
	}

	// Phase 1: the planner runs. Phase 2: the control calls it did not wait for finish, their
	// answers still reported. The device's final goes out between the two: the reply is not held
	// up by calls the planner was told had succeeded. A deadline in phase 2 does not fail the
	// turn, whose reply is out: the calls end on it and report it as their results.
	phase := (<-chan struct{})(planDone)
	deadline := tctx.Done()
	for {
		select {
		case e := <-t.events:
			if !yield(e) {
				end(nil)
				return
			}
			continue
		case <-deviceDone:
		case <-deadline:
			if replied {
				deadline = nil
				continue
			}
		case <-phase:
			if !replied && planErr == nil && failure() == nil {
				t.finishDevice()
				replied = true
				watchBackground()
				phase = bgDone
				continue
			}
		}
		break
	}
	if term := failure(); term != nil {
		a.log.Info("turn failed", "mac", mac, "err", term.Err)
		end(term)
		return
	}
	close(t.stop)           // every goroutine has ended: nothing more is sent
	for len(t.events) > 0 { // what the control calls reported last
		if !yield(<-t.events) {
			return
		}
	}
	text := t.reply()
	a.history.add(r.SessionID, Exchange{User: r.Text, Reply: text})
	release()
	yield(Event{Kind: EventFinal, Text: text})
}

// errAborted cancels the planner of a turn that is over.
var errAborted = errors.New("agent: the turn is over")

func isGone(done <-chan struct{}) bool {
	if done == nil {
		return false
	}
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// plan runs the planner, turning a panic into an error.
func (t *turn) plan() (err error) {
	defer func() {
		if p := recover(); p != nil {
			t.a.log.Error("planner panicked", "panic", p, "stack", string(debug.Stack()))
			err = fmt.Errorf("agent: the planner failed: %v", p)
		}
	}()
	err = t.a.opts.Planner.Plan(t.ctx, t)
	if err == nil {
		t.mu.Lock()
		t.planned = true
		t.mu.Unlock()
	}
	return err
}

// finishDevice sends the device its final, the chunks joined, once. A turn that failed before
// its planner finished sends one only when chunks went out, so the device's half-shown reply is
// ended.
func (t *turn) finishDevice() {
	if t.req.MAC == "" || t.a.opts.Hub == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.finalSent || (!t.planned && t.chunks.Len() == 0) {
		return
	}
	t.finalSent = true
	if err := t.a.opts.Hub.Send(t.req.MAC, protocol.MessageFinal, t.chunks.String()); err != nil {
		t.a.log.Debug("sending the final", "mac", t.req.MAC, "err", err)
	}
}

func (t *turn) reply() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.chunks.String()
}

// emit hands an event to the caller, unless nobody reads any more.
func (t *turn) emit(e Event) {
	select {
	case t.events <- e:
	case <-t.stop:
	}
}

func (t *turn) Request() Request { return t.req }

func (t *turn) History() []Exchange { return append([]Exchange(nil), t.history...) }

func (t *turn) Tools() []tools.Declaration { return append([]tools.Declaration(nil), t.tools...) }

func (t *turn) Chunk(text string) {
	if text == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.chunks.WriteString(text)
	t.send(protocol.MessageChunk, text)
	t.emit(Event{Kind: EventChunk, Text: text})
}

func (t *turn) Thought(text string) {
	if text == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.send(protocol.MessageThought, text)
	t.emit(Event{Kind: EventThought, Text: text})
}

// send streams to the device; called with t.mu held so messages keep their order. A failure is
// only logged: a device that left ends the turn by itself.
func (t *turn) send(typ, text string) {
	if t.req.MAC == "" || t.a.opts.Hub == nil {
		return
	}
	if err := t.a.opts.Hub.Send(t.req.MAC, typ, text); err != nil {
		t.a.log.Debug("streaming to the device", "mac", t.req.MAC, "type", typ, "err", err)
	}
}

func (t *turn) Call(ctx context.Context, name string, input json.RawMessage) (json.RawMessage, error) {
	t.emit(Event{Kind: EventToolCall, Tool: name, Input: input})
	res, err, later := t.call(ctx, name, input)
	if !later {
		t.emit(Event{Kind: EventToolResult, Tool: name, Result: res, Err: err})
	}
	return res, err
}

// call runs one tool. later is true for a control call answered at once, whose EventToolResult
// comes when the device answers.
func (t *turn) call(ctx context.Context, name string, input json.RawMessage) (res json.RawMessage, err error, later bool) {
	if t.a.isLocal(name) {
		res, err := t.callLocal(ctx, name, input)
		return res, err, false
	}
	h, mac := t.a.opts.Hub, t.req.MAC
	if mac == "" || h == nil {
		return nil, fmt.Errorf("%w: %q is not one of the server's tools, and the turn has no device", ErrNoDevice, name), false
	}
	decl, err := h.Validate(mac, name, input)
	if err != nil {
		return nil, toolError(err), false
	}
	if decl.SubType == tools.Control && !t.a.opts.WaitForControl {
		t.bg.Go(func() { t.callLater(mac, name, input) })
		return successResult, nil, true
	}
	if ctx != t.ctx { // a planner's own context: the turn's end must still stop the call
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(t.ctx, cancel)()
	}
	res, err = h.Call(ctx, mac, name, input)
	return res, toolError(err), false
}

// callLater runs a control call whose success the planner was already told. The device's answer
// is logged and reported as an EventToolResult: an error is never lost.
func (t *turn) callLater(mac, name string, input json.RawMessage) {
	res, err := t.a.opts.Hub.Call(t.ctx, mac, name, input)
	err = toolError(err)
	if err != nil {
		t.a.log.Warn("control tool failed after the planner was told it succeeded", "mac", mac, "tool", name, "err", err)
	} else {
		t.a.log.Debug("control tool answered", "mac", mac, "tool", name)
	}
	t.emit(Event{Kind: EventToolResult, Tool: name, Result: res, Err: err})
}

// callLocal runs one of the server's tools with the same validation as a device's.
func (t *turn) callLocal(ctx context.Context, name string, input json.RawMessage) (res json.RawMessage, err error) {
	ctx = context.WithValue(ctx, requestKey{}, t.req)
	p, err := t.a.opts.Local.Prepare(name, input)
	if err != nil {
		return nil, toolError(err)
	}
	defer func() {
		if r := recover(); r != nil {
			t.a.log.Error("local tool panicked", "tool", name, "panic", r, "stack", string(debug.Stack()))
			res, err = nil, &ToolError{Code: protocol.CodeInternalError, Message: "Internal error", Details: fmt.Sprintf("tool %s failed: %v", name, r)}
		}
	}()
	v, err := p.Invoke(ctx)
	if err != nil {
		var te *ToolError
		if errors.As(err, &te) {
			return nil, te
		}
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, &ToolError{Code: protocol.CodeServerError, Message: err.Error()}
	}
	if raw, ok := v.(json.RawMessage); ok {
		return raw, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, &ToolError{Code: protocol.CodeInternalError, Message: "Internal error", Details: fmt.Sprintf("tool %s: result is not JSON: %v", name, err)}
	}
	return b, nil
}

type requestKey struct{}

// RequestOf returns the request of the turn a local tool was called in: a tool that acts on
// "this device" (a reminder, an announcement) reads its MAC. ok is false outside a turn.
func RequestOf(ctx context.Context) (r Request, ok bool) {
	r, ok = ctx.Value(requestKey{}).(Request)
	return r, ok
}
