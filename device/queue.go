package device

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
)

// The dispatcher's scheduler: who runs when (docs/protocol.md, "Concurrency and order").
//
// A call waits for two things: its parts (tools.Tool.Resources) and a running slot (MaxInFlight).
// Every part keeps a queue of claims, calls' and Holds', in arrival order. A claim joins the
// queues of all its parts at once, under dispatcher.mu, so every queue holds its claims in the
// same relative order: a claim only ever waits for older ones, and two claims can never each own
// a part the other waits for. A call that owns all its parts waits in dispatcher.ready, in arrival
// order, for a slot. So calls on one part run one at a time in the order they arrived, a call
// waiting for a busy part holds no slot, and a part that hangs holds up only its own queue.
//
// Every function here whose name does not say otherwise is called with dispatcher.mu held.

// part is the queue of one resource.
type part struct {
	owner   *claim   // nil: free
	waiters []*claim // in arrival order
}

// claim is a call's or a Hold's place in its parts' queues.
type claim struct {
	seq   uint64
	parts []*part // no duplicates
	owned int     // how many of parts it owns

	call    *call         // nil for a Hold
	granted chan struct{} // a Hold's: closed once it owns every part
}

// admit takes c in, or says why not: the device is stopping, or c would have to wait and the
// queue is full. A local call does not depend on the line, so only the agent's end refuses it.
// An admitted call starts at once or waits its turn. When it starts at once with nothing ahead of
// it and no other call started with it, and it is an instant tool's or mine says the caller can
// run any, admit returns it as own, for the caller to run on its own goroutine (d.run) instead of
// waking a worker.
func (d *dispatcher) admit(c *call, mine bool) (own *call, refused string) {
	d.mu.Lock()
	if d.closed || (d.stopping && c.via != ViaLocal) {
		d.mu.Unlock()
		return nil, "the device is shutting down"
	}
	c.parts = d.partsOf(c.tool)
	prev := d.superseded(c)
	if !d.startsNow(c) {
		room := d.maxQueued - d.waiting
		if prev != nil {
			room++ // c takes prev's place
		}
		if room <= 0 {
			why := fmt.Sprintf("%d calls running and %d waiting", d.inFlight, d.waiting)
			switch {
			case d.maxQueued > 0:
			case d.inFlight >= d.maxInFlight:
				why = fmt.Sprintf("%d calls already in flight", d.maxInFlight)
			default:
				why = "its hardware is busy with another call, and no call may wait"
			}
			d.mu.Unlock()
			return nil, why
		}
	}
	if prev != nil {
		d.abandon(prev)
	}
	d.watchAsker(c.ctx)
	d.unanswered++
	d.waiting++
	d.seq++
	c.seq = d.seq
	d.track(c, c.deadline)
	d.enqueue(&c.claim)
	start := d.takeStartable(make([]*call, 0, 4))
	d.mu.Unlock()
	if prev != nil {
		d.answerSuperseded(prev)
		d.done()
	}
	if len(start) == 1 && start[0] == c && (c.tool.Inline || mine) {
		return c, ""
	}
	d.launch(start)
	return nil, ""
}

// startsNow reports whether c would start at once: a slot is free with nobody waiting for one,
// and each of its parts is free with nobody queued on it.
func (d *dispatcher) startsNow(c *call) bool {
	if d.inFlight >= d.maxInFlight || len(d.ready) > 0 {
		return false
	}
	for _, p := range c.parts {
		if p.owner != nil || len(p.waiters) > 0 {
			return false
		}
	}
	return true
}

// superseded returns the call that c, arriving now, may replace: a waiting control call to the
// same tool (not a Relative one), on parts, that is the last in every queue c joins. Nothing else
// is queued between the two, so skipping the older one changes no other call's outcome, and the
// device still ends in the state of the last call sent. A call on no part is never superseded:
// nothing orders it.
func (d *dispatcher) superseded(c *call) *call {
	if c.tool.SubType != tools.Control || c.tool.Relative || len(c.parts) == 0 {
		return nil
	}
	var prev *claim
	for _, p := range c.parts {
		if len(p.waiters) == 0 {
			return nil
		}
		last := p.waiters[len(p.waiters)-1]
		if prev != nil && last != prev {
			return nil
		}
		prev = last
	}
	pc := prev.call
	if pc == nil || pc.state != waitingParts || pc.name != c.name || len(pc.parts) != len(c.parts) {
		return nil
	}
	return pc
}

// partsFor returns the queues of the named resources, without duplicates. A tool's are kept, for
// the tools of the registry in force (setRegistry and configure drop them).
func (d *dispatcher) partsOf(t *tools.Tool) []*part {
	if len(t.Resources) == 0 {
		return nil
	}
	if ps, ok := d.toolParts[t]; ok {
		return ps
	}
	ps := d.partsFor(t.Resources)
	if d.toolParts == nil {
		d.toolParts = make(map[*tools.Tool][]*part)
	}
	d.toolParts[t] = ps
	return ps
}

// partsFor returns the queues of the named resources, without duplicates.
func (d *dispatcher) partsFor(names []string) []*part {
	if len(names) == 0 {
		return nil
	}
	ps := make([]*part, 0, len(names))
	for _, name := range names {
		p, ok := d.parts[name]
		if !ok {
			p = &part{}
			d.parts[name] = p
		}
		if !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	return ps
}

// enqueue puts cl at the end of its parts' queues, owning at once each part that is free with
// nobody waiting for it.
func (d *dispatcher) enqueue(cl *claim) {
	for _, p := range cl.parts {
		if p.owner == nil && len(p.waiters) == 0 {
			p.owner = cl
			cl.owned++
		} else {
			p.waiters = append(p.waiters, cl)
		}
	}
	if cl.owned == len(cl.parts) {
		d.granted(cl)
	}
}

// granted is told that cl owns all its parts: a Hold returns, a call waits for a slot.
func (d *dispatcher) granted(cl *claim) {
	c := cl.call
	if c == nil {
		close(cl.granted)
		return
	}
	c.state = waitingSlot
	i, _ := slices.BinarySearchFunc(d.ready, c.seq, func(r *call, seq uint64) int { return compareSeq(r.seq, seq) })
	d.ready = slices.Insert(d.ready, i, c)
	d.fill()
}

func compareSeq(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// fill gives free slots to the oldest calls waiting for one; takeStartable hands them out.
func (d *dispatcher) fill() {
	for d.inFlight < d.maxInFlight && len(d.ready) > 0 {
		c := d.ready[0]
		d.ready = slices.Delete(d.ready, 0, 1)
		c.state = running
		d.inFlight++
		d.waiting--
		if !c.tool.Inline {
			// An instant tool returns before any deadline could matter: its context is the asker's.
			// The watcher, which tracks the call at its deadline from admission, cancels this one then.
			ctx, stop := context.WithCancelCause(c.ctx)
			c.runCtx, c.stop = callContext{ctx, c.deadline}, stop
		}
		d.startable = append(d.startable, c)
	}
}

// takeStartable appends the calls fill started to buf, for launch once mu is released. The
// callers' buf lives on their stack, and d.startable keeps its array: no allocation per call.
func (d *dispatcher) takeStartable(buf []*call) []*call {
	buf = append(buf, d.startable...)
	clear(d.startable)
	d.startable = d.startable[:0]
	return buf
}

// release gives up cl's place: the parts it owns go to the next claim in each queue, and it leaves
// the queues where it still waits.
func (d *dispatcher) release(cl *claim) {
	for _, p := range cl.parts {
		if p.owner != cl {
			if i := slices.Index(p.waiters, cl); i >= 0 {
				p.waiters = slices.Delete(p.waiters, i, i+1)
			}
			continue
		}
		p.owner = nil
		if len(p.waiters) == 0 {
			continue
		}
		next := p.waiters[0]
		p.waiters = slices.Delete(p.waiters, 0, 1)
		p.owner = next
		next.owned++
		if next.owned == len(next.parts) {
			d.granted(next)
		}
	}
	cl.owned = 0
}

// abandon takes c, which has not started, out of every queue; the caller answers it and calls
// done.
func (d *dispatcher) abandon(c *call) {
	if c.state == waitingSlot {
		if i := slices.Index(d.ready, c); i >= 0 {
			d.ready = slices.Delete(d.ready, i, i+1)
		}
	}
	c.state = finished
	d.waiting--
	d.untrack(c)
	d.release(&c.claim)
}

// finish is told that c's tool has returned (or that c was dropped at its start): its slot and
// parts go to the calls next in line. It returns one of them for the caller's worker to run, and
// launches the others. Called without mu.
func (d *dispatcher) finish(c *call) (next *call) {
	d.mu.Lock()
	c.state = finished
	d.inFlight--
	d.untrack(c)
	d.release(&c.claim)
	d.fill()
	start := d.takeStartable(make([]*call, 0, 4))
	d.mu.Unlock()
	if len(start) == 0 {
		return nil
	}
	d.launch(start[1:])
	return start[0]
}

// acquire takes the named parts the way a call does, in the same queues, without a slot: it waits,
// until ctx is done, for the claims queued before it, and keeps every later one waiting until
// release is called. Called without mu.
func (d *dispatcher) acquire(ctx context.Context, names []string) (release func(), err error) {
	cl := &claim{granted: make(chan struct{})}
	d.mu.Lock()
	d.seq++
	cl.seq = d.seq
	cl.parts = d.partsFor(names)
	d.enqueue(cl)
	d.mu.Unlock()
	giveUp := func() {
		d.mu.Lock()
		d.release(cl)
		start := d.takeStartable(make([]*call, 0, 4))
		d.mu.Unlock()
		d.launch(start)
	}
	select {
	case <-cl.granted:
	case <-ctx.Done():
		giveUp() // whether or not it was granted meanwhile
		return nil, ctx.Err()
	}
	var once sync.Once
	return func() { once.Do(giveUp) }, nil
}

// watchAsker makes sure that when ctx, an asker's context, is done, the calls it left waiting
// leave the queues at once (dropCancelled) rather than at their turn or their deadline: the
// line's context ends when the line closes, and a call behind a hung part would otherwise wait out
// its timeout for an answer that can no longer be sent. One watch per context: the line's is
// watched once for its session.
func (d *dispatcher) watchAsker(ctx context.Context) {
	if ctx.Done() == nil || d.askers[ctx] {
		return
	}
	if d.askers == nil {
		d.askers = make(map[context.Context]bool)
	}
	d.askers[ctx] = true
	context.AfterFunc(ctx, func() {
		d.mu.Lock()
		delete(d.askers, ctx)
		d.mu.Unlock()
		d.dropCancelled()
	})
}

// dropCancelled takes every waiting call whose asker is gone out of the queues, and answers it
// (the answer goes nowhere, but OnCall hears of it). Called without mu.
func (d *dispatcher) dropCancelled() {
	var dropped []*call
	d.mu.Lock()
	gone := func(c *call) bool { return c != nil && c.state != finished && c.ctx.Err() != nil }
	for _, c := range slices.Clone(d.ready) {
		if gone(c) {
			dropped = append(dropped, c)
		}
	}
	for _, p := range d.parts {
		for _, cl := range p.waiters {
			if gone(cl.call) && !slices.Contains(dropped, cl.call) {
				dropped = append(dropped, cl.call)
			}
		}
	}
	for _, c := range dropped {
		d.abandon(c)
	}
	start := d.takeStartable(make([]*call, 0, 4))
	d.mu.Unlock()
	d.launch(start)
	for _, c := range dropped {
		d.answerFail(c, protocol.CodeToolTimeout, "call cancelled before it ran")
		d.done()
	}
}
