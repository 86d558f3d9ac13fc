//go:build unix

package rawconn

import (
	"net"
	"syscall"
	"testing"
)

func TestDialStalledHasASmallBuffer(t *testing.T) {
	addr, conns := listen(t)
	c := DialStalled(t, addr)
	(<-conns).Close()
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var serr error
	if err := rc.Control(func(fd uintptr) { n, serr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF) }); err != nil || serr != nil {
		t.Fatal(err, serr)
	}
	// Linux doubles what it is asked for, for its own bookkeeping.
	if n > 2*4096 {
		t.Errorf("receive buffer %d bytes, want at most %d", n, 2*4096)
	}
}
