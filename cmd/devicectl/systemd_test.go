package main

import (
	"context"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/devicectl/devicectl/device/agenttest"
)

// notifySocket listens where run's sd_notify messages go, as systemd does for a Type=notify unit,
// with the given WatchdogSec.
func notifySocket(t *testing.T, watchdog string) <-chan string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("NOTIFY_SOCKET", sock)
	t.Setenv("WATCHDOG_USEC", watchdog)
	msgs := make(chan string, 1024)
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 512)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				return
			}
			select {
			case msgs <- string(buf[:n]):
			default: // a test that stopped listening
			}
		}
	}()
	t.Cleanup(func() { conn.Close(); <-done })
	return msgs
}

// await reads messages until one satisfies want, and returns those before it.
func await(t *testing.T, msgs <-chan string, what string, want func(string) bool) (before []string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case m := <-msgs:
			if want(m) {
				return before
			}
			before = append(before, m)
		case <-timeout:
			t.Fatalf("no %s within 10s; got %q", what, before)
		}
	}
}

// Under systemd run says what it does in STATUS=, READY=1 once registered, feeds the watchdog
// while healthy, and says STOPPING=1 on the way out.
func TestRunNotifiesSystemd(t *testing.T) {
	msgs := notifySocket(t, "20000") // 20ms: a feed every 10ms
	srv, err := agenttest.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan result, 1)
	go func() {
		done <- runCLI(ctx, "", "run", "--config", "/dev/null", "--server", srv.URL(), "--mac", "AA-BB-CC-DD-EE-03",
			"--state-dir", t.TempDir(), "--log-level", "error")
	}()

	before := await(t, msgs, "READY=1", func(m string) bool { return strings.HasPrefix(m, "READY=1\n") })
	// Watchdog feeds may come between these on a slow machine (qemu): the loop is healthy.
	before = slices.DeleteFunc(before, func(m string) bool { return m == "WATCHDOG=1" })
	want := []string{"STATUS=connecting to " + srv.URL(), "STATUS=connected; registering the tools with " + srv.URL()}
	if strings.Join(before, "|") != strings.Join(want, "|") {
		t.Errorf("before READY=1: %q, want %q", before, want)
	}
	await(t, msgs, "WATCHDOG=1", func(m string) bool { return m == "WATCHDOG=1" })
	cancel()
	if r := <-done; r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	await(t, msgs, "STOPPING=1", func(m string) bool { return m == "STOPPING=1" })
}
