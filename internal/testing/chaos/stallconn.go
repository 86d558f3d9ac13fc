package chaos

import (
	"net"
	"sync/atomic"
)

// stallListener hands out stallConns, so any line can later be stalled.
type stallListener struct{ net.Listener }

func (l stallListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &stallConn{Conn: c}, nil
}

// stallConn is a server-side TCP connection that can be made a black hole in both directions:
// what the device sends is read and thrown away, what the server writes is dropped, and neither
// side sees a close. It is what a half-open line looks like from the device: the socket is fine,
// writes succeed, nothing ever comes back, so only its keepalive can tell.
//
// Reading on while stalled (rather than not reading) keeps the kernel buffers from filling, so
// the device's writes never block: the stall is caught by the missing pong, not by a stuck write.
// A real error (the device closed its end) still comes through, which is how the server learns
// that the device gave the line up.
type stallConn struct {
	net.Conn
	stalled atomic.Bool
}

func (c *stallConn) stall() { c.stalled.Store(true) }

func (c *stallConn) Read(p []byte) (int, error) {
	for {
		n, err := c.Conn.Read(p)
		if !c.stalled.Load() {
			return n, err
		}
		if err != nil {
			return 0, err
		}
	}
}

func (c *stallConn) Write(p []byte) (int, error) {
	if c.stalled.Load() {
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// reset closes the connection with a TCP RST instead of a FIN, as a crashed peer or a middlebox
// would.
func (c *stallConn) reset() {
	if tc, ok := c.Conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Conn.Close()
}
