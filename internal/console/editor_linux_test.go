package console

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/internal/term/ptytest"
)

// At a terminal the console edits lines: up-arrow brings back the line before, left-arrow moves
// into the line to insert, and no escape sequence reaches the command parser.
func TestConsoleLineEditing(t *testing.T) {
	ptmx, pts := ptytest.Open(t)
	scr := ptytest.Read(t, ptmx)
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
		scr.WaitCount(t, "t> ", i+1) // the prompt is up: the terminal is the editor's
		n := strings.Count(scr.String(), k.want)
		if _, err := ptmx.WriteString(k.typed); err != nil {
			t.Fatal(err)
		}
		scr.WaitCount(t, k.want, n+1)
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
	ptmx, pts := ptytest.Open(t)
	scr := ptytest.Read(t, ptmx)
	c := &Console{Server: newFake(), Out: NewSyncWriter(pts), Prompt: "t> ", Interactive: true}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, pts) }()
	scr.WaitCount(t, "t> ", 1)
	ptmx.WriteString("half a li")
	scr.WaitCount(t, "half a li", 1)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after a cancel: %v, want nil", err)
	}
	scr.WaitCount(t, "\n", 1)
	if got := scr.String(); !strings.HasSuffix(strings.TrimRight(got, "\r\n"), "half a li") || strings.Count(got, "t> ") != 1 {
		t.Errorf("the screen after the stop: %q, want the prompt once and the line ended", got)
	}
	checkCooked(t, pts)
}

// checkCooked fails unless the terminal has its own line editing and echo back.
func checkCooked(t *testing.T, pts *os.File) {
	t.Helper()
	rc, err := pts.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var tio *unix.Termios
	if cerr := rc.Control(func(fd uintptr) { tio, err = unix.IoctlGetTermios(int(fd), unix.TCGETS) }); cerr != nil || err != nil {
		t.Fatal(cerr, err)
	}
	if tio.Lflag&(unix.ICANON|unix.ECHO) != unix.ICANON|unix.ECHO {
		t.Errorf("after Run the terminal's lflag is %#x: ICANON and ECHO not restored", tio.Lflag)
	}
}
