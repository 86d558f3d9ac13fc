// Package standin runs device/agenttest's stand-in server for the tests of what runs a device
// (cmd/devicectl, internal/daemon), and writes the config such a device starts from.
package standin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/devicectl/devicectl/device/agenttest"
)

// Wait bounds a wait for the device: on loopback it takes milliseconds.
const Wait = 10 * time.Second

// WaitCtx is the test's context bounded by Wait, for a call that goes to the device or the
// server over loopback.
func WaitCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), Wait)
	t.Cleanup(cancel)
	return ctx
}

// Start runs a stand-in server until the test ends.
func Start(t testing.TB, opts *agenttest.Options) *agenttest.Server {
	t.Helper()
	srv, err := agenttest.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// NextRegistration returns the next registration srv sees, skipping disconnections.
func NextRegistration(t testing.TB, srv *agenttest.Server) *agenttest.Device {
	t.Helper()
	timer := time.NewTimer(Wait)
	defer timer.Stop()
	for {
		select {
		case e := <-srv.Events():
			if e.Kind == agenttest.Registered {
				return e.Device
			}
		case <-timer.C:
			t.Fatalf("no registration within %s", Wait)
		}
	}
}

// Description is the description d registered tool with, "" if it did not register it.
func Description(d *agenttest.Device, tool string) string {
	for _, tl := range d.Tools {
		if tl.Name == tool {
			return tl.Description
		}
	}
	return ""
}

// ToolNames is the names of the tools d registered, in their order.
func ToolNames(d *agenttest.Device) []string {
	var names []string
	for _, tl := range d.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// WriteFile writes text to a file called name in a directory of the test's own, readable by its
// owner only as a config or secret file should be, and returns its path: a device's config, or a
// file the config names.
func WriteFile(t testing.TB, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// BaseConfig is a device's config file for the server at url: a fixed MAC, a state directory of
// the test's, simulated hardware, a 1s ping and debug logs.
func BaseConfig(t testing.TB, url string) string {
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

// Execute sends the stand-in server's mcp/tool/execute of tool with input to d and returns the
// answer, failing the test when none comes within Wait.
func Execute(t testing.TB, d *agenttest.Device, tool, input string) *jsonrpc2.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), Wait)
	defer cancel()
	resp, err := d.Execute(ctx, tool, json.RawMessage(input))
	if err != nil {
		t.Fatal(err)
	}
	return resp
}
