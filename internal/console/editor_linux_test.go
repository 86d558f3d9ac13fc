package console

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/internal/testing/ptytest"
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
	vt := ptytest.NewVT(80, 24)
	vt.Write([]byte(scr.String()))
	if row, col := vt.Cursor(); vt.Row(0) != "t> half a li" || row != 1 || col != 0 {
		t.Errorf("the screen after the stop, cursor at %d,%d:\n%s\nwant the prompt's line and the cursor below it", row, col, vt)
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

// At an 80-column terminal, a Chinese line that wraps is edited with Backspace, Ctrl-A and
// Ctrl-K, an insertion across the wrap, Ctrl-U and the history: at every Enter, the line the
// screen shows (emulated from what the console wrote) is the line the agent hears.
func TestConsoleLineEditingWide(t *testing.T) {
	ptmx, pts := ptytest.Open(t)
	ptytest.Resize(t, pts, 80, 24)
	scr := ptytest.Read(t, ptmx)
	srv := newFake()
	srv.add("AA-BB-CC-DD-EE-01")
	srv.events = func(agent.Request) []agent.Event {
		return []agent.Event{{Kind: agent.EventError, Err: errors.New("heard")}}
	}
	c := &Console{Server: srv, Out: NewSyncWriter(pts), Prompt: "t> ", Interactive: true}
	done := make(chan error, 1)
	go func() { done <- c.Run(t.Context(), pts) }()

	cjk := []rune(strings.Repeat("请把音量调到三十", 5)) // 40 characters, 80 columns
	line := string(cjk)
	rep := strings.Repeat
	scr.WaitCount(t, "t> ", 1) // the prompt is up: the terminal is the editor's
	for i, step := range []struct{ name, keys, want string }{
		{"10 Backspaces", line + rep("\x7f", 10), string(cjk[:30])},
		{"Ctrl-A, 5 right, Ctrl-K, a character", line + "\x01" + rep("\x06", 5) + "\x0b好", string(cjk[:5]) + "好"},
		{"an insertion that pushes the rest across the wrap", line + "\x01" + rep("\x1b[C", 20) + "好的", string(cjk[:20]) + "好的" + string(cjk[20:])},
		{"10 left, Ctrl-U", line + rep("\x1b[D", 10) + "\x15", string(cjk[30:])},
		{"a short line", "短", "短"},
		{"up to a long line, down to the short one", "\x1b[A\x1b[A\x1b[B", "短"},
		{"up to the long line", "\x1b[A\x1b[A\x1b[A", string(cjk[:20]) + "好的" + string(cjk[20:])},
	} {
		scr.WaitCount(t, "error: heard", i)
		if _, err := ptmx.WriteString(step.keys + "\r"); err != nil {
			t.Fatal(err)
		}
		scr.WaitCount(t, "error: heard", i+1)
		srv.mu.Lock()
		sent := srv.turns[len(srv.turns)-1].Text
		srv.mu.Unlock()
		shown, screen := shownAtEnter(scr.String(), "t> ", "error: heard")
		if sent != step.want || shown != step.want {
			t.Fatalf("%s: the agent heard %q, the screen showed %q; want %q:\n%s", step.name, sent, shown, step.want, screen)
		}
	}
	if _, err := ptmx.WriteString("quit\r"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// shownAtEnter emulates an 80x24 terminal showing out and returns the last line entered at
// prompt, read from the rows between its prompt and the row starting with reply, which the
// console printed after the Enter; and the screen.
func shownAtEnter(out, prompt, reply string) (string, *ptytest.VT) {
	vt := ptytest.NewVT(80, 24)
	vt.Write([]byte(out))
	end := vt.Rows() - 1
	for end >= 0 && !strings.HasPrefix(vt.Row(end), reply) {
		end--
	}
	start := end - 1
	for start >= 0 && !strings.HasPrefix(vt.Row(start), prompt) {
		start--
	}
	if start < 0 {
		return "", vt
	}
	var b strings.Builder
	for r := start; r < end; r++ {
		b.WriteString(vt.Row(r))
	}
	return strings.TrimPrefix(b.String(), prompt), vt
}
