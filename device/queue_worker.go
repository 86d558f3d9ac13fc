package device

import (
	"sync"
	"time"
)

// Calls run on worker goroutines the dispatcher owns. A worker that finishes a call runs the next
// one its finish started, if any; then it waits workerLinger for another before it exits. Under
// load a handful of goroutines, their stacks already grown, run every call, instead of a new
// goroutine (and its stack growth) per call. At most MaxInFlight run calls; as many may be idle.
type workerPool struct {
	handoff chan *call    // unbuffered: a send succeeds only if a worker is idle
	quit    chan struct{} // closed by close: idle workers exit
	once    sync.Once
}

// workerLinger is how long an idle worker waits for a call before it exits: long enough to span
// the gaps of a busy line, short enough that an agent that is never run leaves nothing behind.
const workerLinger = 500 * time.Millisecond

func (w *workerPool) init() {
	w.handoff = make(chan *call)
	w.quit = make(chan struct{})
}

func (w *workerPool) close() { w.once.Do(func() { close(w.quit) }) }

// launch hands each call to an idle worker, or to a new one. Called without mu.
func (d *dispatcher) launch(cs []*call) {
	for _, c := range cs {
		select {
		case d.workers.handoff <- c:
		default:
			go d.work(c)
		}
	}
}

// work runs c, then every call handed to it, until it has been idle for workerLinger or the
// dispatcher closes.
func (d *dispatcher) work(c *call) {
	var linger *time.Timer
	for {
		for c != nil {
			c = d.run(c)
		}
		if linger == nil {
			linger = time.NewTimer(workerLinger)
		} else {
			linger.Reset(workerLinger)
		}
		select {
		case c = <-d.workers.handoff:
			linger.Stop()
		case <-d.workers.quit:
			linger.Stop()
			return
		case <-linger.C:
			return
		}
	}
}
