package transport

import (
	"bytes"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
)

// countingConn counts the writes that reach a real TCP connection.
type countingConn struct {
	net.Conn
	writes atomic.Int64
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// tcpPair returns both ends of a loopback TCP connection, the dialled one wrapped as Dial wraps it.
func tcpPair(t *testing.T) (*coalescingConn, *countingConn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	d, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	peer := <-accepted
	if peer == nil {
		t.Fatal("accept failed")
	}
	counted := &countingConn{Conn: d}
	c := &coalescingConn{Conn: counted}
	t.Cleanup(func() { c.Close(); peer.Close() })
	return c, counted, peer
}

func readN(t *testing.T, c net.Conn, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := io.ReadFull(c, b); err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Writes go out at once, but those made while the reader works through what it read wait for its
// next Read (or a flush, or Close), and go out together, in order.
func TestCoalescingConn(t *testing.T) {
	leakCheck(t)
	c, counted, peer := tcpPair(t)

	if _, err := c.Write([]byte("a")); err != nil {
		t.Fatal(err)
	}
	if got := readN(t, peer, 1); got != "a" || counted.writes.Load() != 1 {
		t.Fatalf("before any read: peer got %q after %d writes", got, counted.writes.Load())
	}

	// The reader reads; its answers wait until it reads again.
	peer.Write([]byte("12"))
	buf := make([]byte, 2)
	if _, err := io.ReadFull(c, buf); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"b", "c", "d"} {
		if _, err := c.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	if n := counted.writes.Load(); n != 1 {
		t.Fatalf("%d writes reached the socket while the reader worked; want them to wait", n)
	}
	peer.Write([]byte("3"))
	if _, err := c.Read(buf[:1]); err != nil {
		t.Fatal(err)
	}
	if got := readN(t, peer, 3); got != "bcd" || counted.writes.Load() != 2 {
		t.Fatalf("after the next read: peer got %q after %d writes; want bcd in one", got, counted.writes.Load())
	}

	// A flush from elsewhere (the reader's watch) sends them, and ends the batch.
	if _, err := c.Write([]byte("e")); err != nil {
		t.Fatal(err)
	}
	if err := c.flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("f")); err != nil {
		t.Fatal(err)
	}
	if got := readN(t, peer, 2); got != "ef" || counted.writes.Load() != 4 {
		t.Fatalf("after a flush: peer got %q after %d writes", got, counted.writes.Load())
	}

	// More than maxCoalesced goes out at once, after what waits.
	peer.Write([]byte("4"))
	if _, err := c.Read(buf[:1]); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("g")); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("h", maxCoalesced)
	if _, err := c.Write([]byte(big)); err != nil {
		t.Fatal(err)
	}
	if got := readN(t, peer, 1+len(big)); got != "g"+big {
		t.Fatalf("a big write: peer got %d bytes, not g and the write", len(got))
	}
	if cap(c.pending) > maxCoalesced+lineWriteBuffer {
		t.Errorf("the buffer keeps %d bytes after a big write", cap(c.pending))
	}

	// Close sends what waits.
	peer.Write([]byte("5"))
	if _, err := c.Read(buf[:1]); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("bye")); err != nil {
		t.Fatal(err)
	}
	c.Close()
	rest, err := io.ReadAll(peer)
	if err != nil || !bytes.Equal(rest, []byte("bye")) {
		t.Errorf("after Close the peer read %q, %v; want bye", rest, err)
	}
}
