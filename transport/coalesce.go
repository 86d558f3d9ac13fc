package transport

import (
	"net"
	"sync"
	"time"
)

// coalescingConn is the connection under a dialled line. While the reader is at work on what its
// last read brought (a Read has returned data, and the next has not started), the frames written
// meanwhile wait in a buffer, and go out together just before the reader reads again, or when the
// reader's watch hands the reading over (Stream.Flush): a server that sends several calls at once
// gets their answers in one write, not one write (and one wake-up of the server) each. Nothing
// waits for more input: the reader reads again only once it has dealt with all it has, and it
// flushes first. Outside the reader's work, a write goes out at once.
type coalescingConn struct {
	net.Conn

	mu      sync.Mutex
	batch   bool   // the reader is at work on what its last Read brought
	pending []byte // the frames written meanwhile, in order
}

// maxCoalesced bounds what waits: a write that would make more goes out at once, with what waits
// before it.
const maxCoalesced = 16 << 10

func (c *coalescingConn) Read(p []byte) (int, error) {
	if err := c.flush(); err != nil {
		return 0, err
	}
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.mu.Lock()
		c.batch = true
		c.mu.Unlock()
	}
	return n, err
}

func (c *coalescingConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.batch && len(c.pending)+len(p) <= maxCoalesced {
		c.pending = append(c.pending, p...)
		return len(p), nil
	}
	if len(c.pending) == 0 {
		return c.Conn.Write(p)
	}
	c.pending = append(c.pending, p...)
	if err := c.writePending(); err != nil {
		return 0, err
	}
	return len(p), nil
}

// closeFlushLimit bounds how long Close tries to send what waits.
const closeFlushLimit = time.Second

// Close sends what waits first, within closeFlushLimit: coder/websocket answers a peer's close
// frame, and closes the connection, from within the reader's work. A write under way (perhaps
// stuck: a teardown closes the connection to end it) is not waited for.
func (c *coalescingConn) Close() error {
	if c.mu.TryLock() {
		if len(c.pending) > 0 {
			c.Conn.SetWriteDeadline(time.Now().Add(closeFlushLimit))
			c.writePending() // the line ends either way; the peer's read says how
		}
		c.batch = false
		c.mu.Unlock()
	}
	return c.Conn.Close()
}

// flush writes what waits, and ends the batch: writes go out at once until the next Read returns.
func (c *coalescingConn) flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.batch = false
	return c.writePending()
}

func (c *coalescingConn) writePending() error {
	if len(c.pending) == 0 {
		return nil
	}
	_, err := c.Conn.Write(c.pending)
	if cap(c.pending) > maxCoalesced+lineWriteBuffer {
		c.pending = nil // a big frame grew it: not kept for the line's life
	} else {
		c.pending = c.pending[:0]
	}
	return err
}
