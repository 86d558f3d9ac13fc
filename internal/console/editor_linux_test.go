package console

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/devicectl/devicectl/agent"
)

// openPTY opens a pseudo-terminal pair: ptmx is the side a terminal emulator holds (what is
// written there is typed, what is read there is shown), pts the side a program runs on. Both are
// non-blocking, so Go's poller owns them and Close ends a read in progress: a test ends its
// reading goroutines by closing.
func openPTY(t *testing.T) (ptmx, pts *os.File) {
	t.Helper()
	open := func(name string) *os.File {
		fd, err := unix.Open(name, unix.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Skipf("no pseudo-terminals here: %s: %v", name, err)
		}
		f := os.NewFile(uintptr(fd), name)
		t.Cleanup(func() { f.Close() })
		return f
	}
	ptmx = open("/dev/ptmx")
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlocking the pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("naming the pty: %v", err)
	}
	return ptmx, open("/dev/pts/" + strconv.Itoa(n))
}

// screen collects what the program shows on the terminal, for a test to wait on.
type screen struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{}
}

func readScreen(t *testing.T, ptmx *os.File) *screen {
	s := &screen{changed: make(chan struct{}, 1)}
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

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitCount waits until text has been shown n times. A terminal answers in its own time, so this
// waits on what is read rather than on a clock; the deadline only ends a test that would hang.
func (s *screen) waitCount(t *testing.T, text string, n int) {
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

// At a terminal the console edits lines: up-arrow brings back the line before, left-arrow moves
// into the line to insert, and no escape sequence reaches the command parser.
func TestConsoleLineEditing(t *testing.T) {
	ptmx, pts := openPTY(t)
	scr := readScreen(t, ptmx)
	srv := newFake()
	srv.add("AA-BB-CC-DD-EE-01")
	srv.events = func(r agent.Request) []agent.Event {
		return []agent.Event{{Kind: agent.EventError, Err: fmt.Errorf("said to the agent: %q", r.Text)}}
	}
	c := &Console{Server: srv, Out: NewSyncWriter(pts), Prompt: "t> ", Interactive: true}
	done := make(chan error, 1)
	go func() { done <- c.Run(t.Context(), pts) }()

	const listed = "AA-BB-CC-DD-EE-01  1 tools  127.0.0.1:1"
	type key struct{ typed, want string }
	for i, k := range []key{
		{"devices\r", listed},
		{"\x1b[A\r", listed}, // up-arrow: devices again
		// Typos mended: left-arrow twice, a letter, right-arrow, another letter.
		{"devcs\x1b[D\x1b[Di\x1b[Ce\r", listed},
	} {
		scr.waitCount(t, "t> ", i+1) // the prompt is up: the terminal is the editor's
		n := strings.Count(scr.String(), k.want)
		if _, err := ptmx.WriteString(k.typed); err != nil {
			t.Fatal(err)
		}
		scr.waitCount(t, k.want, n+1)
	}
	if _, err := ptmx.WriteString("quit\r"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	got := scr.String()
	if strings.Contains(got, "error:") {
		t.Errorf("a typed line failed:\n%q", got)
	}
	if n := strings.Count(got, listed); n != 3 {
		t.Errorf("devices ran %d times, want 3:\n%q", n, got)
	}
	checkCooked(t, pts)
}

// Stopped by a signal at the prompt, the console ends the prompt's line, so the shell's prompt
// starts a line of its own, and gives the terminal its settings back.
func TestConsoleLineEditingStop(t *testing.T) {
	ptmx, pts := openPTY(t)
	scr := readScreen(t, ptmx)
	c := &Console{Server: newFake(), Out: NewSyncWriter(pts), Prompt: "t> ", Interactive: true}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, pts) }()
	scr.waitCount(t, "t> ", 1)
	ptmx.WriteString("half a li")
	scr.waitCount(t, "half a li", 1)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after a cancel: %v, want nil", err)
	}
	scr.waitCount(t, "\n", 1)
	if got := scr.String(); !strings.HasSuffix(strings.TrimRight(got, "\r\n"), "half a li") || strings.Count(got, "t> ") != 1 {
		t.Errorf("the screen after the stop: %q, want the prompt once and the line ended", got)
	}
	checkCooked(t, pts)
}

// checkCooked fails unless the terminal has its own line editing and echo back.
func checkCooked(t *testing.T, pts *os.File) {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(pts.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	if tio.Lflag&(unix.ICANON|unix.ECHO) != unix.ICANON|unix.ECHO {
		t.Errorf("after Run the terminal's lflag is %#x: ICANON and ECHO not restored", tio.Lflag)
	}
}
