package rawconn

import (
	"io"
	"net"
	"testing"
	"time"
)

// listen returns a listener whose accepted connections come on the channel.
func listen(t *testing.T) (string, <-chan net.Conn) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	conns := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			conns <- c
		}
		close(conns)
	}()
	return ln.Addr().String(), conns
}

func TestTrickleSendsABytePerInterval(t *testing.T) {
	addr, conns := listen(t)
	c := Dial(t, addr)
	s := <-conns
	defer s.Close()
	const every = 20 * time.Millisecond
	start := time.Now()
	Trickle(t, c, every)
	buf := make([]byte, 3)
	s.SetReadDeadline(time.Now().Add(Wait))
	if _, err := io.ReadFull(s, buf); err != nil {
		t.Fatal(err)
	}
	if string(buf) != "   " {
		t.Errorf("read %q, want three spaces", buf)
	}
	if took := time.Since(start); took < 3*every {
		t.Errorf("three bytes came in %v, want no faster than one per %v", took, every)
	}
}

func TestClosedSeesTheServerHangUp(t *testing.T) {
	addr, conns := listen(t)
	c := Dial(t, addr)
	s := <-conns
	io.WriteString(s, "HTTP/1.1 408 Request Timeout\r\n\r\n")
	s.Close()
	if err := Closed(c); err != nil {
		t.Errorf("Closed after the server hung up: %v", err)
	}
}
