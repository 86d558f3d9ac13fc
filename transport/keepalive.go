package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"
)

// keepalive pings every pingInterval and declares the line dead when a pong
// takes longer than pingTimeout. TCP alone can take many minutes to notice a
// half-open line (a NAT that forgot us, a peer that lost power); a device must
// notice within seconds to reconnect. The Stream owns this goroutine: teardown
// stops it and Close waits for it.
//
// coder/websocket only sees a pong while some goroutine reads, so Read (or
// ReadObject) must be called continuously.
func (s *Stream) keepalive() {
	t := time.NewTimer(s.cfg.pingInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
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
			if errors.Is(err, context.DeadlineExceeded) {
				s.log.Warn("no pong from the peer: closing the connection", "timeout", s.cfg.pingTimeout)
				s.teardown(fmt.Errorf("%w (%s): %w", ErrPingTimeout, s.cfg.pingTimeout, err), false)
				return
			}
			if errors.Is(err, net.ErrClosed) {
				// Closed under the ping by whoever saw why first (the
				// reader, a writer); it records the cause.
				return
			}
			s.teardown(fmt.Errorf("transport: ping: %w", err), false)
			return
		}
		s.heard()
		t.Reset(s.cfg.pingInterval)
	}
}

// errWriteTimeout is the reason a Stream died when a write made no progress
// for the write timeout: the peer stopped reading or the network stalled.
var errWriteTimeout = errors.New("transport: write timed out")

// watchWrites enforces the write timeout. Writes carry no deadline of their
// own: in coder/websocket a deadline means a context and a runtime timer per
// write, and creating and stopping that timer wakes the network poller, which
// made a round trip about 40% slower. Instead this goroutine looks every quarter
// of the timeout: when writes are pending and none has completed for the whole
// timeout, the line is stuck and is closed, which fails the pending writes.
// A stuck write is caught between 1 and 1.25 timeouts after it began.
func (s *Stream) watchWrites() {
	t := time.NewTicker(max(s.cfg.writeTimeout/4, time.Millisecond))
	defer t.Stop()
	var (
		last    uint64
		stalled time.Time // first tick that saw pending writes and no progress
	)
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			done := s.writesDone.Load()
			if s.writesPending.Load() == 0 || done != last {
				last, stalled = done, time.Time{}
				continue
			}
			if stalled.IsZero() {
				stalled = now
				continue
			}
			if now.Sub(stalled) >= s.cfg.writeTimeout {
				s.log.Warn("a write made no progress: closing the connection", "timeout", s.cfg.writeTimeout)
				s.teardown(fmt.Errorf("%w: no progress for %s", errWriteTimeout, s.cfg.writeTimeout), false)
				return
			}
		}
	}
}
