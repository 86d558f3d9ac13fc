//go:build linux

package ptytest

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Open opens a pseudo-terminal pair: ptmx is the side a terminal emulator holds (what is
// written there is typed, what is read there is shown), pts the side a program runs on. Both are
// non-blocking, so Go's poller owns them and Close ends a read in progress: a test ends its
// reading goroutines by closing.
func Open(t testing.TB) (ptmx, pts *os.File) {
	t.Helper()
	open := func(name string) int {
		fd, err := unix.Open(name, unix.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Skipf("no pseudo-terminals here: %s: %v", name, err)
		}
		return fd
	}
	// The ioctls go to the bare descriptor: os.File.Fd would make it blocking again.
	mfd := open("/dev/ptmx")
	ptmx = os.NewFile(uintptr(mfd), "/dev/ptmx")
	t.Cleanup(func() { ptmx.Close() })
	if err := unix.IoctlSetPointerInt(mfd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlocking the pty: %v", err)
	}
	n, err := unix.IoctlGetInt(mfd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("naming the pty: %v", err)
	}
	name := "/dev/pts/" + strconv.Itoa(n)
	pts = os.NewFile(uintptr(open(name)), name)
	t.Cleanup(func() { pts.Close() })
	return ptmx, pts
}

// Screen collects what the program shows on the terminal, for a test to wait on.
type Screen struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{}
}

// Read collects what is shown on ptmx until the test ends, when it closes ptmx and waits for
// its reading goroutine.
func Read(t testing.TB, ptmx *os.File) *Screen {
	s := &Screen{changed: make(chan struct{}, 1)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			s.mu.Lock()
			s.b.Write(buf[:n])
			s.mu.Unlock()
			select {
			case s.changed <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { ptmx.Close(); <-done })
	return s
}

func (s *Screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// WaitCount waits until text has been shown n times. A terminal answers in its own time, so this
// waits on what is read rather than on a clock; the deadline only ends a test that would hang.
func (s *Screen) WaitCount(t testing.TB, text string, n int) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for strings.Count(s.String(), text) < n {
		select {
		case <-s.changed:
		case <-deadline:
			t.Fatalf("waited for %q %d times; the screen shows:\n%q", text, n, s.String())
		}
	}
}

// Resize sets the terminal's size, as a terminal emulator does when its window changes.
func Resize(t testing.TB, pts *os.File, cols, rows int) {
	t.Helper()
	rc, err := pts.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	ws := &unix.Winsize{Col: uint16(cols), Row: uint16(rows)}
	if cerr := rc.Control(func(fd uintptr) { err = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, ws) }); cerr != nil || err != nil {
		t.Fatalf("setting the terminal's size: %v %v", cerr, err)
	}
}
