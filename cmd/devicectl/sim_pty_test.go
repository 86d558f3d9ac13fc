//go:build linux && !devicectl_omit_sim

package main

import (
	"context"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/internal/testing/ptytest"
)

// sim at a terminal: up-arrow runs the line before again (it used to be said to the agent as
// "\x1b[A"), and Ctrl-C at the prompt ends the prompt's line and exits 0, a stop asked for.
func TestSimTerminal(t *testing.T) {
	ptmx, pts := ptytest.Open(t)
	scr := ptytest.Read(t, ptmx)
	// Ctrl-C reaches sim as run's signal context being cancelled.
	ctx, interrupt := context.WithCancel(t.Context())
	code := make(chan int, 1)
	go func() { code <- execute(ctx, []string{"sim"}, pts, pts, pts) }()

	const listed = "AA-BB-CC-DD-EE-FF  3 tools"
	scr.WaitCount(t, "sim> ", 1)
	ptmx.WriteString("devices\r")
	scr.WaitCount(t, listed, 1)
	scr.WaitCount(t, "sim> ", 2)
	ptmx.WriteString("\x1b[A\r")
	scr.WaitCount(t, listed, 2)
	scr.WaitCount(t, "sim> ", 3)
	interrupt()
	if c := <-code; c != exitOK {
		t.Errorf("sim stopped by Ctrl-C: exit %d, want 0", c)
	}
	got := scr.String()
	if strings.Contains(got, "error") {
		t.Errorf("sim at a terminal showed an error:\n%q", got)
	}
	if i := strings.LastIndex(got, "sim> "); !strings.Contains(got[i:], "\n") {
		t.Errorf("after Ctrl-C the prompt's line is not ended: %q", got[i:])
	}
}
