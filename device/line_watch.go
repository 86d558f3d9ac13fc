package device

import (
	"sync"
	"sync/atomic"
	"time"
)

// The line's reader runs a call that starts at once itself, instead of handing it to a worker:
// waking a goroutine costs a round trip more than most calls take (the runtime wakes a thread for
// it, and a thread goes back to sleep), so a board's quick calls, an I2C write or a volume read,
// would spend more time being handed over than running. A call that takes longer must not hold up
// the line: readerWatch notices it within two ticks and starts another goroutine reading, and the
// one running the call goes on as a worker once it returns.
//
// The watch ticks only while the reader runs calls, on one timer re-armed from its own tick: a busy
// line costs a tick every watchTick, not a timer per call, and an idle one none.

// watchTick is how often the watch looks at the call the reader runs: a call is handed over after
// running between one and two ticks, so a slow call delays the line's other messages by no more.
const watchTick = 500 * time.Microsecond

// readerWatch hands the line's reading to a new goroutine when the reader runs a call for longer
// than a tick.
type readerWatch struct {
	// running is the number of the call the reader runs; 0: none. The reader sets it (start) and
	// clears it (finish) only if it still holds that number; the watch clears it when it hands
	// the reading over, with the same compare-and-swap, so exactly one of them wins.
	running atomic.Uint64
	started atomic.Uint64 // calls started on the reader, ever: the watch stops once it stays still
	armed   atomic.Bool   // the timer is set, or a tick is at work and sets it again
	stopped atomic.Bool   // the line is gone: no hand-over, no tick

	handover func() // starts another goroutine reading the line

	mu     sync.Mutex  // serialises ticks
	timer  *time.Timer // runs tick
	seen   uint64      // running at the last tick
	starts uint64      // started at the last tick
}

func newReaderWatch(handover func()) *readerWatch {
	w := &readerWatch{handover: handover}
	w.timer = time.AfterFunc(time.Hour, w.tick)
	w.timer.Stop()
	return w
}

// start is called by the reader before it runs a call; finish, with start's number, once it has
// returned.
func (w *readerWatch) start() uint64 {
	n := w.started.Add(1)
	w.running.Store(n)
	// After running is set: a tick that is stopping looks at running after it clears armed, so
	// either it sees this call or this sees armed cleared (and one of them sets the timer).
	if !w.armed.Load() && w.armed.CompareAndSwap(false, true) {
		w.timer.Reset(watchTick)
	}
	return n
}

// finish reports whether the caller is still the line's reader: false when the watch handed the
// reading to another goroutine meanwhile.
func (w *readerWatch) finish(n uint64) bool {
	return w.running.CompareAndSwap(n, 0)
}

// tick hands the reading over when the reader has run the same call since the last tick, and sets
// the timer again unless no call has run since then.
func (w *readerWatch) tick() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped.Load() {
		return
	}
	cur := w.running.Load()
	if cur != 0 && cur == w.seen && w.running.CompareAndSwap(cur, 0) {
		w.handover()
		cur = 0
	}
	w.seen = cur
	n := w.started.Load()
	if cur == 0 && n == w.starts {
		// Nothing ran since the last tick: rest until start sets the timer. A call that started
		// since running was read saw armed still set; look again after clearing it.
		w.armed.Store(false)
		if w.running.Load() == 0 || !w.armed.CompareAndSwap(false, true) {
			return
		}
	}
	w.starts = n
	w.timer.Reset(watchTick)
}

// stop ends the watch: the line is gone, and nobody is to read it any more. A tick at work
// may set the timer again; the next one sees stopped.
func (w *readerWatch) stop() {
	w.stopped.Store(true)
	w.timer.Stop()
}
