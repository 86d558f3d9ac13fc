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
// the line: readerWatch notices it once it has run for watchLimit and starts another goroutine
// reading, and the one running the call goes on as a worker once it returns.
//
// The watch runs only while the reader runs calls, on one timer that sets itself again for the
// moment the call running then reaches watchLimit: a busy line of quick calls costs a timer run
// about every watchLimit, not a timer per call (each would take the timer heap's lock twice, and
// wake a thread sleeping in the poller), and an idle one none.

// watchLimit is how long the reader may run one call before the watch hands the reading over: a
// slow call delays the line's other messages by no more.
const watchLimit = 750 * time.Microsecond

// watchEpoch is what the watch measures calls' starts from: time.Since of a time that carries a
// monotonic reading reads only the monotonic clock.
var watchEpoch = time.Now()

// readerWatch hands the line's reading to a new goroutine when the reader runs a call for longer
// than watchLimit.
type readerWatch struct {
	// running is the number of the call the reader runs; 0: none. The reader sets it (start) and
	// clears it (finish) only if it still holds that number; the watch clears it when it hands
	// the reading over, with the same compare-and-swap, so exactly one of them wins.
	running atomic.Uint64
	since   atomic.Int64  // when the latest call started, since watchEpoch; stored before running
	started atomic.Uint64 // calls started on the reader, ever: each its own number
	armed   atomic.Bool   // the timer is set, or a check is at work and sets it again
	stopped atomic.Bool   // the line is gone: no hand-over, no check

	handover func() // starts another goroutine reading the line
	flush    func() // sends the answers that wait for the reader to read again (Stream.Flush)

	mu     sync.Mutex  // serialises checks
	timer  *time.Timer // runs check
	starts uint64      // started at the last check
}

func newReaderWatch(handover, flush func()) *readerWatch {
	w := &readerWatch{handover: handover, flush: flush}
	w.timer = time.AfterFunc(time.Hour, w.check)
	w.timer.Stop()
	return w
}

// start is called by the reader before it runs a call; finish, with start's number, once it has
// returned.
func (w *readerWatch) start() uint64 {
	n := w.started.Add(1)
	w.since.Store(int64(time.Since(watchEpoch)))
	w.running.Store(n)
	// After running is set: a check that is resting looks at running after it clears armed, so
	// either it sees this call or this sees armed cleared (and one of them sets the timer).
	if !w.armed.Load() && w.armed.CompareAndSwap(false, true) {
		w.timer.Reset(watchLimit)
	}
	return n
}

// finish reports whether the caller is still the line's reader: false when the watch handed the
// reading to another goroutine meanwhile.
func (w *readerWatch) finish(n uint64) bool {
	return w.running.CompareAndSwap(n, 0)
}

// check hands the reading over when the reader's call has run for watchLimit, else sets the timer
// for when it will have; it rests once no call has started since the last check, until start
// sets the timer.
func (w *readerWatch) check() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.stopped.Load() {
		// The line's writes wait while its reader works through what it read (transport's
		// coalescingConn): a reader running calls sends its answers at least every watchLimit.
		w.flush()
	}
	for !w.stopped.Load() {
		n := w.started.Load()
		if cur := w.running.Load(); cur != 0 {
			// since was stored before running: it is cur's start or a later call's, which makes
			// ran short (the check comes again), never an earlier one's.
			ran := time.Since(watchEpoch) - time.Duration(w.since.Load())
			if ran < watchLimit {
				w.starts = n
				w.timer.Reset(watchLimit - ran)
				return
			}
			if w.running.CompareAndSwap(cur, 0) {
				w.handover()
			}
			continue // the reader finished cur, or handed it over: look again
		}
		if n != w.starts {
			// Calls come and go: keep the timer going here rather than have the reader's next
			// call set it, on the reader's own time.
			w.starts = n
			w.timer.Reset(watchLimit)
			return
		}
		// Nothing ran since the last check. A call that started since running was read saw armed
		// still set; look again after clearing it.
		w.armed.Store(false)
		if w.running.Load() == 0 || !w.armed.CompareAndSwap(false, true) {
			return
		}
	}
}

// stop ends the watch: the line is gone, and nobody is to read it any more. A check at work may
// set the timer again; the next one sees stopped.
func (w *readerWatch) stop() {
	w.stopped.Store(true)
	w.timer.Stop()
}
