package transport

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestPingTimeoutOnHalfOpenLine runs pings through a proxy, then freezes the
// proxy so nothing passes in either direction, as when a NAT forgets the
// line: the Stream must notice within the ping timeout and go down with
// ErrPingTimeout.
func TestPingTimeoutOnHalfOpenLine(t *testing.T) {
	leakCheck(t)
	pings := make(chan struct{}, 100)
	srv := newRawServer(t, &websocket.AcceptOptions{
		OnPingReceived: func(context.Context, []byte) bool {
			select {
			case pings <- struct{}{}:
			default:
			}
			return true // answer with a pong
		},
	})
	p := newProxy(t, srv.Listener.Addr().String())
	logger, logs := newTestLogger()
	const timeout = 500 * time.Millisecond
	conn, s := dialConn(t, "ws://"+p.addr()+"/", &DialOptions{
		PingInterval: 10 * time.Millisecond,
		PingTimeout:  timeout,
		Logger:       logger,
	}, echoHandler(nil))
	srv.accept(t).CloseRead(t.Context()) // the server reads, so it answers pings

	for i := range 3 {
		select {
		case <-pings:
		case <-time.After(waitTimeout):
			t.Fatalf("the server saw %d pings, want 3", i)
		}
	}
	select {
	case <-s.Done():
		t.Fatalf("the line died while pongs were flowing: %v", s.Err())
	default:
	}

	// Pongs count as hearing from the peer, though no message flows.
	if heard := s.LastHeard(); time.Since(heard) > 200*time.Millisecond {
		t.Errorf("LastHeard %v ago while pongs flow every 10ms", time.Since(heard))
	}

	p.freeze()
	frozen := time.Now()
	time.Sleep(100 * time.Millisecond)                                          // ten ping intervals without a pong
	if heard := s.LastHeard(); heard.After(frozen.Add(50 * time.Millisecond)) { // a pong already past the proxy may land
		t.Errorf("LastHeard %v moved on after the line froze at %v", heard, frozen)
	}
	waitDone(t, s)
	<-conn.DisconnectNotify()
	if !errors.Is(s.Err(), ErrPingTimeout) {
		t.Errorf("Err() = %v, want ErrPingTimeout", s.Err())
	}
	if took := time.Since(frozen); took < timeout {
		t.Errorf("declared dead %v after the freeze, before the %v ping timeout", took, timeout)
	}
	if n := logs.count("level=WARN", "no pong"); n != 1 {
		t.Errorf("%d warnings about the missing pong, want 1; log:\n%s", n, logs)
	}
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

// TestStuckWriteClosesLine freezes the line while the device writes: once
// the socket buffers are full a write blocks, and after WriteTimeout without
// progress the Stream must close the line and fail the write.
func TestStuckWriteClosesLine(t *testing.T) {
	leakCheck(t)
	srv := newRawServer(t, nil)
	p := newProxy(t, srv.Listener.Addr().String())
	logger, logs := newTestLogger()
	const timeout = 200 * time.Millisecond
	s, err := Dial(t.Context(), "ws://"+p.addr()+"/", &DialOptions{PingInterval: -1, WriteTimeout: timeout, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	srv.accept(t)
	p.freeze()

	big := map[string]string{"pad": strings.Repeat("x", 1<<20)}
	written := make(chan error, 1)
	go func() {
		for {
			if err := s.WriteObject(big); err != nil {
				written <- err
				return
			}
		}
	}()
	select {
	case err := <-written:
		if !isClosedErr(err) {
			t.Errorf("the stuck write failed with %v, want a closed connection", err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("the write is still stuck")
	}
	waitDone(t, s)
	if !errors.Is(s.Err(), errWriteTimeout) {
		t.Errorf("Err() = %v, want a write timeout", s.Err())
	}
	if n := logs.count("level=WARN", "no progress"); n != 1 {
		t.Errorf("%d warnings about the stuck write, want 1; log:\n%s", n, logs)
	}
}

// TestIdleStreamStaysUp checks that neither watchdog fires on a healthy, idle
// line: the test waits for enough pings to span several write timeouts.
func TestIdleStreamStaysUp(t *testing.T) {
	leakCheck(t)
	pings := make(chan struct{}, 100)
	srv := newRawServer(t, &websocket.AcceptOptions{
		OnPingReceived: func(context.Context, []byte) bool { pings <- struct{}{}; return true },
	})
	const writeTimeout = 20 * time.Millisecond
	_, s := dialConn(t, srv.url(), &DialOptions{PingInterval: 5 * time.Millisecond, WriteTimeout: writeTimeout}, echoHandler(nil))
	srv.accept(t).CloseRead(t.Context())

	start := time.Now()
	for n := 0; n < 10 || time.Since(start) < 5*writeTimeout; n++ {
		select {
		case <-pings:
		case <-s.Done():
			t.Fatalf("an idle, healthy line went down: %v", s.Err())
		case <-time.After(waitTimeout):
			t.Fatal("no ping")
		}
	}
}
