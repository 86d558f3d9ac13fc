package main

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/devicectl/devicectl/device/agenttest"
)

// The stand-in server and the config the run tests share.

func startStandIn(t *testing.T, opts *agenttest.Options) *agenttest.Server {
	t.Helper()
	srv, err := agenttest.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// nextRegistration returns the next registration srv sees, skipping disconnections.
func nextRegistration(t *testing.T, srv *agenttest.Server) *agenttest.Device {
	t.Helper()
	for {
		select {
		case e := <-srv.Events():
			if e.Kind == agenttest.Registered {
				return e.Device
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no registration within 10s")
		}
	}
}

func description(d *agenttest.Device, tool string) string {
	for _, tl := range d.Tools {
		if tl.Name == tool {
			return tl.Description
		}
	}
	return ""
}

func baseConfig(t *testing.T, url string) string {
	return fmt.Sprintf(`server:
  url: %s
device:
  mac: AA-BB-CC-DD-EE-FF
  state_dir: %s
  language: en
connection:
  ping_interval: 1s
hardware:
  mode: sim
log:
  level: debug
`, url, t.TempDir())
}

// watchedBuffer is a buffer safe for a writer and a reader in different goroutines, which wakes
// waitFor at every write: a test follows a process's log without polling it.
type watchedBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	written chan struct{} // closed at the next write
}

func (b *watchedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.written != nil {
		close(b.written)
		b.written = nil
	}
	return b.b.Write(p)
}

func (b *watchedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// waitFor returns the text once ok holds for it, checking after each write. It returns false
// when gone is closed first (the writer has exited), and fails the test when 10s pass first.
func (b *watchedBuffer) waitFor(t *testing.T, what string, gone <-chan struct{}, ok func(string) bool) (string, bool) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		b.mu.Lock()
		text := b.b.String()
		if b.written == nil {
			b.written = make(chan struct{})
		}
		written := b.written
		b.mu.Unlock()
		if ok(text) {
			return text, true
		}
		select {
		case <-written:
		case <-gone:
			return b.String(), ok(b.String())
		case <-timeout:
			t.Fatalf("no %s within 10s:\n%s", what, text)
		}
	}
}
