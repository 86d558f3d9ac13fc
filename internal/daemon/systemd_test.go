package daemon

import (
	"context"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/devicectl/devicectl/internal/testing/sdnotify"
	"github.com/devicectl/devicectl/internal/testing/standin"
)

// A reload is bracketed for systemd: RELOADING=1 with MONOTONIC_USEC (systemd 253 and later match
// it to `systemctl reload`), then READY=1 once the new config is in force, or refused.
func TestReloadNotifiesSystemd(t *testing.T) {
	msgs := sdnotify.Listen(t, "0")
	srv := standin.Start(t, nil)
	cfg := standin.BaseConfig(t, srv.URL())
	d := startDaemon(t, cfg, nil)
	sdnotify.Await(t, msgs, "READY=1", func(m string) bool { return strings.HasPrefix(m, "READY=1\n") })

	for _, tc := range []struct{ config, ends string }{
		{strings.Replace(cfg, "level: debug", "level: info", 1), "configuration reloaded"},
		{cfg + "bogus: 1\n", "reload refused"},
	} {
		d.reload(t, tc.config, tc.ends)
		var reloading string
		sdnotify.Await(t, msgs, "RELOADING=1", func(m string) bool { reloading = m; return strings.HasPrefix(m, "RELOADING=1\n") })
		usec, ok := strings.CutPrefix(reloading, "RELOADING=1\nMONOTONIC_USEC=")
		if n, err := strconv.ParseInt(usec, 10, 64); !ok || err != nil || n <= 0 {
			t.Errorf("reload announced as %q, want RELOADING=1 and MONOTONIC_USEC", reloading)
		}
		if before := sdnotify.Await(t, msgs, "READY=1", func(m string) bool { return m == "READY=1" }); len(before) != 0 {
			t.Errorf("between RELOADING=1 and READY=1: %q", before)
		}
	}
}

// With the server down, the daemon still says READY=1 after a bounded wait, with a STATUS= saying
// what it waits for, so systemd does not kill and restart it in a loop.
func TestReadyWithoutServer(t *testing.T) {
	msgs := sdnotify.Listen(t, "0")
	old := readyWait
	readyWait = 200 * time.Millisecond
	defer func() { readyWait = old }()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "ws://" + ln.Addr().String() + "/"
	ln.Close()

	c := simConfig(t, url, "AA-BB-CC-DD-EE-03")
	c.Log.Level = slog.LevelError
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- New(c, &Options{Getenv: func(string) string { return "" }}).Run(ctx) }()
	before := sdnotify.Await(t, msgs, "READY=1", func(m string) bool {
		return m == "READY=1\nSTATUS=started; still waiting for the first registration with "+url
	})
	if !strings.Contains(strings.Join(before, "|"), "STATUS=not connected to "+url+"; backing off") {
		t.Errorf("no back-off STATUS before READY=1: %q", before)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}
