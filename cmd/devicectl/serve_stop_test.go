//go:build !devicectl_omit_serve

package main

import (
	"regexp"
	"strings"
	"testing"
)

// A server that stops normally says so (close 1001), and its devices reconnect without a
// warning: a normal shutdown is not an error on either side.
func TestServeStopIsNoFault(t *testing.T) {
	var srvLog []string // read once serve has stopped
	srv := startServe(t, func(l string) { srvLog = append(srvLog, l) },
		"--listen", "127.0.0.1:0", "--state-dir", t.TempDir(), "--log-level", "info", "--log-format", "text")
	url := srv.url

	dev := startRun(t, "--config", "/dev/null", "--hardware", "sim", "--server", url, "--mac", "02-00-00-00-00-0A",
		"--state-dir", t.TempDir(), "--log-level", "info", "--log-format", "text")
	dev.stderr.WaitFor(t, "the device's registration", func(s string) bool { return strings.Contains(s, "msg=registered") })
	if code := srv.stop(); code != 0 {
		t.Errorf("serve exit %d", code)
	}
	line := dev.stderr.WaitCount(t, regexp.MustCompile(`.*the server closed the line.*`), 1)[0][0]
	if !strings.Contains(line, "level=INFO") || !strings.Contains(line, "StatusGoingAway") {
		t.Errorf("the device logged the server's stop as %q; want info, naming 1001 going away", line)
	}
	dev.stop()
	for _, line := range srvLog {
		t.Log(line)
		if strings.Contains(line, "level=ERROR") {
			t.Errorf("serve logged its own normal stop as an error: %s", line)
		}
	}
}
