// Package sdnotify stands in for systemd's side of sd_notify in tests: it listens where a
// Type=notify unit's messages go and hands them to the test in order.
package sdnotify

import (
	"net"
	"path/filepath"
	"testing"
	"time"
)

// Wait bounds Await: a message comes within milliseconds, so reaching it is a failure.
const Wait = 10 * time.Second

// Listen sets NOTIFY_SOCKET and WATCHDOG_USEC (watchdog, in microseconds) for the test, as
// systemd does for a Type=notify unit with WatchdogSec, and returns the messages sent there.
// Messages past 1024 unread are dropped.
func Listen(t testing.TB, watchdog string) <-chan string {
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

// Await reads messages until one satisfies want, and returns those before it; it fails the test
// (naming what) when Wait passes first.
func Await(t testing.TB, msgs <-chan string, what string, want func(string) bool) (before []string) {
	t.Helper()
	timer := time.NewTimer(Wait)
	defer timer.Stop()
	for {
		select {
		case m := <-msgs:
			if want(m) {
				return before
			}
			before = append(before, m)
		case <-timer.C:
			t.Fatalf("no %s within %s; got %q", what, Wait, before)
		}
	}
}
