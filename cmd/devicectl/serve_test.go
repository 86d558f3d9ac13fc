//go:build !devicectl_omit_serve

package main

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
)

// serve prints devices as they come and go, and its console drives them.
func TestServe(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	errR, errW := io.Pipe()
	out := newLineWaiter(outR)
	done := make(chan int, 1)
	go func() {
		defer outW.Close()
		defer errW.Close()
		done <- execute(ctx, []string{"serve", "--listen", "127.0.0.1:0"}, inR, outW, errW)
	}()
	banner, err := bufio.NewReader(errR).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, errR)
	_, url, ok := strings.Cut(banner, "listening at ")
	url, _, _ = strings.Cut(url, ";")
	if !ok || !strings.HasPrefix(url, "ws://127.0.0.1:") {
		t.Fatalf("banner %q has no URL", banner)
	}

	devCtx, stopDevice := context.WithCancel(t.Context())
	devDone := make(chan result, 1)
	go func() {
		devDone <- runCLI(devCtx, "", "run", "--config", "/dev/null", "--server", url, "--mac", "02-00-00-00-00-07",
			"--state-dir", t.TempDir(), "--log-level", "error")
	}()
	out.waitFor(t, "+ 02-00-00-00-00-07 registered 3 tools from 127.0.0.1:")

	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send("devices")
	out.waitFor(t, "02-00-00-00-00-07  3 tools  127.0.0.1:")
	send(`call 02:00:00:00:00:07 amplify_volume {"level": 64}`)
	out.waitFor(t, `{"id":"tool-call-1","result":{`)
	send("call 02-00-00-00-00-08 amplify_volume {}")
	out.waitFor(t, "error: no device 02-00-00-00-00-08 is registered")
	send("say hi")
	out.waitFor(t, "sent to 02-00-00-00-00-07")
	send("tools")
	out.waitFor(t, "get_device_status")
	// The device handles messages in order before the next request: once this call is answered,
	// "hi" has been shown.
	send("call get_device_status")
	out.waitFor(t, `{"id":"tool-call-2","result":{`)

	stopDevice()
	if r := <-devDone; r.code != 0 || r.stdout != "hi\n" {
		t.Errorf("device: exit %d, stdout %q; want 0 and the reply", r.code, r.stdout)
	}
	out.waitFor(t, "- 02-00-00-00-00-07 disconnected")
	send("call amplify_volume {}")
	out.waitFor(t, "error: no device is registered yet")

	send("quit")
	if code := <-done; code != 0 {
		t.Errorf("serve exit %d, want 0", code)
	}
	inW.Close()
}
