package device

import (
	"container/heap"
	"context"
	"time"
)

// One timer watches the deadlines of every admitted call, instead of timers per call. A call is
// tracked from admission, due at its deadline. If it is still waiting then, the watcher answers it
// -32001 and takes it out of the queues. If it runs, the watcher cancels its tool's context (see
// callContext) and looks again timeoutGrace later: a tool stuck where no context reaches (a hung
// bus transfer) is answered for then, while it keeps its slot and parts.
//
// The timer is armed for the earliest due time. It is only moved earlier, never later, and it is
// not stopped when the last call finishes: with one ToolTimeout, each new call is due after those
// before it, so a stream of calls costs one timer firing per ToolTimeout and no other timer work.

// deadlineHeap orders calls by due time; each call knows its index.
type deadlineHeap []*call

func (h deadlineHeap) Len() int           { return len(h) }
func (h deadlineHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }
func (h deadlineHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *deadlineHeap) Push(x any) {
	c := x.(*call)
	c.index = len(*h)
	*h = append(*h, c)
}
func (h *deadlineHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	c.index = -1
	return c
}

// track makes c due at due. Called with mu held.
func (d *dispatcher) track(c *call, due time.Time) {
	c.due = due
	if c.index >= 0 {
		heap.Fix(&d.deadlines, c.index)
	} else {
		heap.Push(&d.deadlines, c)
	}
	d.arm()
}

// untrack stops watching c. Called with mu held.
func (d *dispatcher) untrack(c *call) {
	if c.index < 0 {
		return
	}
	heap.Remove(&d.deadlines, c.index)
	d.arm()
}

// arm sets the timer for the earliest due time, or stops it when nothing is tracked. Called with
// mu held.
func (d *dispatcher) arm() {
	if d.expiring {
		return // expire arms it once it is done
	}
	if len(d.deadlines) == 0 {
		// Left armed: it fires once for nothing, where stopping it here and starting it again for
		// the next call would wake the runtime's timer machinery on every call of a busy line.
		return
	}
	due := d.deadlines[0].due
	if !d.watchAt.IsZero() && !due.Before(d.watchAt) {
		return // it fires earlier, and arms itself again then
	}
	if d.watch == nil {
		d.watch = time.AfterFunc(time.Until(due), d.expire)
	} else {
		d.watch.Reset(time.Until(due))
	}
	d.watchAt = due
}

// expire runs when the timer fires: calls still waiting at their deadline leave the queues and are
// answered -32001; running calls at their deadline have their contexts cancelled, and those past
// the grace are answered -32001 while their tools go on.
func (d *dispatcher) expire() {
	now := time.Now()
	var late, overdue []*call
	d.mu.Lock()
	d.watchAt = time.Time{}
	d.expiring = true
	for len(d.deadlines) > 0 && !d.deadlines[0].due.After(now) {
		c := heap.Pop(&d.deadlines).(*call)
		switch {
		case c.state != running:
			d.abandon(c)
			late = append(late, c)
		case !c.expired:
			// Cancelling takes only the context's own lock; what a tool set to run on it runs on
			// goroutines of its own (context.AfterFunc).
			c.expired = true
			if c.stop != nil {
				c.stop(context.DeadlineExceeded)
			}
			d.track(c, c.deadline.Add(timeoutGrace)) // popped again below if that has passed too
		default:
			overdue = append(overdue, c)
		}
	}
	d.expiring = false
	d.arm()
	start := d.takeStartable(make([]*call, 0, 4))
	d.mu.Unlock()
	d.launch(start)
	for _, c := range late {
		c.once.Do(func() { d.replyTimeout(c) })
		d.done()
	}
	for _, c := range overdue {
		c.once.Do(func() { d.replyTimeout(c) })
	}
}
