package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/device/agenttest"
	"github.com/devicectl/devicectl/internal/testing/sdnotify"
)

// Under systemd run says what it does in STATUS=, READY=1 once registered, feeds the watchdog
// while healthy, and says STOPPING=1 on the way out.
func TestRunNotifiesSystemd(t *testing.T) {
	msgs := sdnotify.Listen(t, "20000") // 20ms: a feed every 10ms
	srv, err := agenttest.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	d := startRun(t, "--config", "/dev/null", "--server", srv.URL(), "--mac", "AA-BB-CC-DD-EE-03",
		"--state-dir", t.TempDir(), "--log-level", "error")

	before := sdnotify.Await(t, msgs, "READY=1", func(m string) bool { return strings.HasPrefix(m, "READY=1\n") })
	// Watchdog feeds may come between these on a slow machine (qemu): the loop is healthy.
	before = slices.DeleteFunc(before, func(m string) bool { return m == "WATCHDOG=1" })
	want := []string{"STATUS=connecting to " + srv.URL(), "STATUS=connected; registering the tools with " + srv.URL()}
	if strings.Join(before, "|") != strings.Join(want, "|") {
		t.Errorf("before READY=1: %q, want %q", before, want)
	}
	sdnotify.Await(t, msgs, "WATCHDOG=1", func(m string) bool { return m == "WATCHDOG=1" })
	if r := d.stop(); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	sdnotify.Await(t, msgs, "STOPPING=1", func(m string) bool { return m == "STOPPING=1" })
}
