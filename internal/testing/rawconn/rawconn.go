// Package rawconn opens plain TCP connections to a server under test and makes them behave as the
// clients a server's limits are for: one that sends nothing, one that never reads its answer
// (DialStalled), one that sends its body a byte at a time (Trickle). Closed tells whether the
// server then hung up. Each connection is closed when the test ends.
package rawconn

import (
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
)

// Wait bounds dialling and Closed. A passing run never reaches it.
const Wait = 10 * time.Second

// Dial opens a TCP connection to addr.
func Dial(t testing.TB, addr string) net.Conn {
	t.Helper()
	return dial(t, addr, nil)
}

// DialStalled opens a connection with a small receive buffer, for a client that never reads: the
// server's writes to it block after a few KiB rather than after megabytes.
func DialStalled(t testing.TB, addr string) net.Conn {
	t.Helper()
	return dial(t, addr, func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) { serr = setRecvBuffer(fd, 4096) })
		return errors.Join(err, serr)
	})
}

func dial(t testing.TB, addr string, control func(network, address string, c syscall.RawConn) error) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: Wait, Control: control}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Trickle writes a space to c every interval, each write quick and the whole slow, until a write
// fails or the test ends; the test's cleanup waits for the writer to stop.
func Trickle(t testing.TB, c net.Conn, every time.Duration) {
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := c.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()
	t.Cleanup(func() {
		close(stop)
		<-done
	})
}

// Closed returns an error unless the server closes c within Wait: a read gets EOF (or a reset),
// past any answer the server sent first.
func Closed(c net.Conn) error {
	c.SetReadDeadline(time.Now().Add(Wait))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("still open after %v", Wait)
	}
	return nil
}
