package transport

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"
)

// TestPingTimeoutOnHalfOpenLine lets pings flow, then freezes the line so
// nothing passes in either direction, as when a NAT forgets it: the Stream
// must go down with ErrPingTimeout exactly one ping timeout after the first
// unanswered ping. It runs on synctest's clock, over a pipe.
func TestPingTimeoutOnHalfOpenLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var pings atomic.Int64
		logger, logs := newTestLogger()
		const interval, timeout = 10 * time.Millisecond, 500 * time.Millisecond
		l := newPipeLine(t, DialOptions{PingInterval: interval, PingTimeout: timeout, Logger: logger}, &websocket.AcceptOptions{
			OnPingReceived: func(context.Context, []byte) bool { pings.Add(1); return true }, // answered with a pong
		})
		l.server.CloseRead(context.Background()) // the server reads, so it answers pings
		serveRead(t, l.device, nil)              // and so does the device, so it sees the pongs
		start := time.Now()

		time.Sleep(3*interval + interval/2)
		synctest.Wait()
		if n := pings.Load(); n != 3 {
			t.Fatalf("the server saw %d pings in 3.5 intervals, want 3", n)
		}
		// Pongs count as hearing from the peer, though no message flows.
		if heard := l.device.LastHeard().Sub(start); heard != 3*interval {
			t.Errorf("LastHeard %v after the start, want the third pong's %v", heard, 3*interval)
		}

		l.end.freeze()
		time.Sleep(10 * interval)
		if heard := l.device.LastHeard().Sub(start); heard != 3*interval {
			t.Errorf("LastHeard moved to %v after the line froze", heard)
		}
		select {
		case <-l.device.Done():
			t.Fatalf("the line died before the ping timeout: %v", l.device.Err())
		default:
		}
		<-l.device.Done()
		// The first unanswered ping went out at the fourth interval.
		if took, want := time.Since(start), 4*interval+timeout; took != want {
			t.Errorf("declared dead %v after the start, want %v", took, want)
		}
		if !errors.Is(l.device.Err(), ErrPingTimeout) {
			t.Errorf("Err() = %v, want ErrPingTimeout", l.device.Err())
		}
		if n := logs.Count("level=WARN", "no pong"); n != 1 {
			t.Errorf("%d warnings about the missing pong, want 1; log:\n%s", n, logs)
		}
	})
}

// TestPingTimeoutAcceptSide checks the server side's keepalive the same way.
func TestPingTimeoutAcceptSide(t *testing.T) {
	leakCheck(t)
	streams := make(chan *Stream, 1)
	srv := newAcceptServer(t, &AcceptOptions{PingInterval: 10 * time.Millisecond, PingTimeout: 300 * time.Millisecond}, streams)
	p := newProxy(t, srv.Listener.Addr().String())

	c, _, err := websocket.Dial(t.Context(), "ws://"+p.addr()+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	c.CloseRead(t.Context()) // the client answers pings
	s := <-streams
	conn := NewConn(context.Background(), s, echoHandler(nil), nil)
	defer conn.Close()

	p.freeze()
	waitDone(t, s)
	if !errors.Is(s.Err(), ErrPingTimeout) || !strings.Contains(s.Err().Error(), "300ms") {
		t.Errorf("Err() = %v, want ErrPingTimeout naming the timeout", s.Err())
	}
}

// TestStuckWriteClosesLine freezes the line while the device writes, so the
// write blocks: after WriteTimeout without progress (checked every quarter
// of it) the Stream must close the line and fail the write. It runs on
// synctest's clock, over a pipe, where an unread write blocks at once.
func TestStuckWriteClosesLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logger, logs := newTestLogger()
		const timeout = 200 * time.Millisecond
		l := newPipeLine(t, DialOptions{PingInterval: -1, WriteTimeout: timeout, Logger: logger}, nil)
		serveRead(t, l.device, nil)
		l.end.freeze()

		start := time.Now()
		err := l.device.WriteNotification("note", map[string]string{"pad": strings.Repeat("x", 1<<10)})
		if !isClosedErr(err) {
			t.Errorf("the stuck write failed with %v, want a closed connection", err)
		}
		<-l.device.Done()
		if took := time.Since(start); took < timeout || took > timeout*5/4 {
			t.Errorf("the stuck write was caught after %v, want between %v and %v", took, timeout, timeout*5/4)
		}
		if !errors.Is(l.device.Err(), errWriteTimeout) {
			t.Errorf("Err() = %v, want a write timeout", l.device.Err())
		}
		if n := logs.Count("level=WARN", "no progress"); n != 1 {
			t.Errorf("%d warnings about the stuck write, want 1; log:\n%s", n, logs)
		}
	})
}

// TestIdleStreamStaysUp checks that neither watchdog fires on a healthy, idle
// line with the default settings: an hour on synctest's clock, a ping every
// interval.
func TestIdleStreamStaysUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var pings atomic.Int64
		l := newPipeLine(t, DialOptions{}, &websocket.AcceptOptions{
			OnPingReceived: func(context.Context, []byte) bool { pings.Add(1); return true },
		})
		l.server.CloseRead(context.Background())
		serveRead(t, l.device, nil)

		time.Sleep(time.Hour)
		synctest.Wait()
		select {
		case <-l.device.Done():
			t.Fatalf("an idle, healthy line went down: %v", l.device.Err())
		default:
		}
		if n, want := pings.Load(), int64(time.Hour/DefaultPingInterval); n != want {
			t.Errorf("%d pings in an hour, want %d", n, want)
		}
	})
}
