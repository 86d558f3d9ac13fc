package main

import (
	"context"
	"net"
	"path/filepath"
	"testing"

	"github.com/devicectl/devicectl/device/agenttest"
)

// Under systemd (NOTIFY_SOCKET, WATCHDOG_USEC) run says READY, feeds the watchdog, says STOPPING.
func TestRunNotifiesSystemd(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	t.Setenv("NOTIFY_SOCKET", sock)
	t.Setenv("WATCHDOG_USEC", "20000") // 20ms: a feed every 10ms

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

	msgs := make(chan string, 64)
	go func() {
		defer close(msgs)
		buf := make([]byte, 256)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				return
			}
			msgs <- string(buf[:n])
		}
	}()
	next := func() string {
		t.Helper()
		select {
		case m := <-msgs:
			return m
		case <-waitCtx(t).Done():
			t.Fatal("no sd_notify message within 10s")
		}
		return ""
	}
	if m := next(); m != "READY=1" {
		t.Fatalf("first message %q, want READY=1", m)
	}
	if m := next(); m != "WATCHDOG=1" {
		t.Fatalf("second message %q, want WATCHDOG=1", m)
	}
	cancel()
	if r := <-done; r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for {
		m := next()
		if m == "STOPPING=1" {
			break
		}
		if m != "WATCHDOG=1" {
			t.Fatalf("message %q, want WATCHDOG=1 or STOPPING=1", m)
		}
	}
	conn.Close()
	for range msgs { // the reader has ended once msgs is closed
	}
}
