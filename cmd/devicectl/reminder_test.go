//go:build !devicectl_omit_serve

package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/devicectl/devicectl/internal/testing/httpdo"
	"github.com/devicectl/devicectl/internal/testing/poll"
	"github.com/devicectl/devicectl/internal/testing/shscript"
	"github.com/devicectl/devicectl/internal/testing/standin"
)

// The robot speaks first, in real time: serve with a device, "remind me in 2 seconds to stretch"
// over A2A, and the device shows and speaks the reminder about two seconds later, with no turn.
func TestServeReminder(t *testing.T) {
	srv := startServe(t, nil, "--listen", "127.0.0.1:0", "--state-dir", t.TempDir())
	console, url := srv.out, srv.url

	dir := t.TempDir()
	spoken := filepath.Join(dir, "spoken.txt")
	speak := shscript.Write(t, dir, "speak", "cat >> "+spoken+"; echo >> "+spoken+"\n")
	config := standin.WriteFile(t, "devicectl.yaml", "hardware:\n  speaker: {driver: sim}\n  face: {driver: sim}\n  speech: {driver: command, command: ["+speak+"]}\n")
	dev := startRun(t, "--config", config, "--server", url, "--mac", "02-00-00-00-00-09", "--state-dir", t.TempDir(), "--log-level", "error")

	// A task needs the device: serve's console says when it has registered.
	console.waitFor(t, "+ 02-00-00-00-00-09 registered")
	go func() {
		for range console.lines {
		}
	}()
	api := srv.api()
	sent := time.Now()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, api+"/a2a", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"remind me in 2 seconds to stretch"}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if _, body := httpdo.Do(t, req); !strings.Contains(body, "I'll remind you to stretch in 2 seconds") {
		t.Fatalf("the task was not answered: %s", body)
	}
	shown := func(line string) {
		dev.stdout.WaitFor(t, line, func(s string) bool { return strings.Contains(s, line) })
	}
	shown("I'll remind you to stretch in 2 seconds")
	shown("Reminder: stretch")
	heard := time.Since(sent)
	if heard < 1900*time.Millisecond || heard > 5*time.Second {
		t.Errorf("the reminder was shown %v after it was set, want about 2 s", heard)
	}
	// The speech program writes what it is given to a file: only the file can tell.
	poll.Until(t, "Reminder: stretch in the speech program's file", func() bool {
		b, _ := os.ReadFile(spoken)
		return strings.Contains(string(b), "Reminder: stretch")
	})
}
