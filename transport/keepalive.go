package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"
)

// The Stream's two watchdogs, keepalive and the write watch, are timers, not goroutines: a
// server holds thousands of idle lines, and a goroutine each would be most of what one costs.
// A timer runs its function on a goroutine of its own only when it fires; teardown stops the
// timers, and Close waits for a function already running (startTimed, endTimed).

// startTimed is called first by a timer's function: false when the Stream is torn down, and the
// function must return at once; true, and endTimed must follow.
func (s *Stream) startTimed() bool {
	s.timedMu.Lock()
	defer s.timedMu.Unlock()
	if s.timedStopped {
		return false
	}
	s.workers.Add(1)
	return true
}

func (s *Stream) endTimed() { s.workers.Done() }

// rearm sets t to fire after d, unless the Stream is torn down.
func (s *Stream) rearm(t *time.Timer, d time.Duration) {
	s.timedMu.Lock()
	defer s.timedMu.Unlock()
	if !s.timedStopped {
		t.Reset(d)
	}
}

// stopTimers stops the watchdogs' timers; no function of theirs starts after it returns.
func (s *Stream) stopTimers() {
	s.timedMu.Lock()
	defer s.timedMu.Unlock()
	s.timedStopped = true
	if s.pingTimer != nil {
		s.pingTimer.Stop()
	}
	if s.writeTimer != nil {
		s.writeTimer.Stop()
	}
}

// ping is keepalive: every pingInterval it pings, and declares the line dead when a pong takes
// longer than pingTimeout. TCP alone can take many minutes to notice a half-open line (a NAT
// that forgot us, a peer that lost power); a device must notice within seconds to reconnect.
//
// coder/websocket only sees a pong while some goroutine reads, so Read (or ReadObject) must be
// called continuously.
func (s *Stream) ping() {
	if !s.startTimed() {
		return
	}
	defer s.endTimed()
	// Teardown closes the connection, which ends a pending Ping.
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.pingTimeout)
	err := s.conn.Ping(ctx)
	cancel()
	if err != nil {
		select {
		case <-s.stop: // torn down meanwhile: not a keepalive failure
			return
		default:
		}
		if errors.Is(err, net.ErrClosed) {
			// Closed under the ping by whoever saw why first (the reader, a writer); it
			// records the cause.
			return
		}
		cause := fmt.Errorf("transport: ping: %w", err)
		if errors.Is(err, context.DeadlineExceeded) {
			s.log.Warn("no pong from the peer: closing the connection", "timeout", s.cfg.pingTimeout)
			cause = fmt.Errorf("%w (%s): %w", ErrPingTimeout, s.cfg.pingTimeout, err)
		}
		s.teardown(cause, false)
		return
	}
	s.heard()
	s.rearm(s.pingTimer, s.cfg.pingInterval)
}

// errWriteTimeout is the reason a Stream died when a write made no progress
// for the write timeout: the peer stopped reading or the network stalled.
var errWriteTimeout = errors.New("transport: write timed out")

// The write watch enforces the write timeout. Writes carry no deadline of their own: in
// coder/websocket a deadline means a context and a runtime timer per write, and creating and
// stopping that timer wakes the network poller, which made a round trip about 40% slower.
// Instead a write that starts while none is pending arms the watch, unless it is armed already;
// it looks every quarter of the timeout while writes are pending, and goes quiet once none is.
// When writes are pending and none has completed for the whole timeout, the line is stuck and
// is closed, which fails the pending writes. A stuck write is caught between 1 and 1.25
// timeouts after the last progress seen (or after it began).

// watchWrites arms the write watch if it is not armed; write calls it with a write pending.
func (s *Stream) watchWrites() {
	if s.writeWatched.Load() || !s.writeWatched.CompareAndSwap(false, true) {
		return
	}
	s.writeLast.Store(s.writesDone.Load())
	s.writeStalled.Store(time.Now().UnixNano())
	s.rearm(s.writeTimer, s.writeQuarter())
}

func (s *Stream) writeQuarter() time.Duration { return max(s.cfg.writeTimeout/4, time.Millisecond) }

// checkWrites is the write watch's look, a quarter of the timeout after the last.
func (s *Stream) checkWrites() {
	if !s.startTimed() {
		return
	}
	defer s.endTimed()
	now := time.Now()
	if s.writesPending.Load() == 0 {
		s.writeWatched.Store(false)
		// A write that began before the watch went quiet saw it armed and did not arm it.
		if s.writesPending.Load() > 0 {
			s.watchWrites()
		}
		return
	}
	if done := s.writesDone.Load(); done != s.writeLast.Load() {
		s.writeLast.Store(done)
		s.writeStalled.Store(now.UnixNano())
	} else if now.Sub(time.Unix(0, s.writeStalled.Load())) >= s.cfg.writeTimeout {
		s.log.Warn("a write made no progress: closing the connection", "timeout", s.cfg.writeTimeout)
		s.teardown(fmt.Errorf("%w: no progress for %s", errWriteTimeout, s.cfg.writeTimeout), false)
		return
	}
	s.rearm(s.writeTimer, s.writeQuarter())
}
