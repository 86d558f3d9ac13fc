package daemon

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/devicectl/devicectl/device/agenttest"
	// The drivers run registers (cmd/devicectl): the daemon opens the parts its config names.
	_ "github.com/devicectl/devicectl/hal/drivers"
	configpkg "github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/testing/leakcheck"
	"github.com/devicectl/devicectl/internal/testing/logbuf"
	"github.com/devicectl/devicectl/internal/testing/standin"
)

// hiddenToken is a bearer token the tests look for where it must not be.
const hiddenToken = "tok-3b9e51c7d2a04f68"

// simConfig is the defaults with simulated parts, a state directory of the test's own, and url
// as the server, for a daemon built in Go rather than read from a file.
func simConfig(t *testing.T, url, mac string) *configpkg.Config {
	c := configpkg.Defaults()
	c.Server.URL = url
	c.Device.MAC = mac
	c.Device.StateDir = t.TempDir()
	c.Hardware.Mode = "sim"
	return c
}

// refusedStart runs a daemon on c, which must refuse to start, and returns Run's error (nil
// once the daemon has run until the test's context ended).
func refusedStart(t *testing.T, c *configpkg.Config) error {
	return New(c, &Options{Stderr: io.Discard, Getenv: func(string) string { return "" }}).Run(t.Context())
}

// waitTools waits for a registration whose tool names satisfy ok, which what describes: a tool
// set's tools come (and go) in a registration of their own.
func waitTools(t *testing.T, srv *agenttest.Server, what string, ok func([]string) bool) *agenttest.Device {
	t.Helper()
	deadline := time.After(20 * time.Second)
	var last []string
	for {
		select {
		case e := <-srv.Events():
			if e.Kind != agenttest.Registered {
				continue
			}
			if last = standin.ToolNames(e.Device); ok(last) {
				return e.Device
			}
		case <-deadline:
			t.Fatalf("no registration with %s within 20s; the last one declared %v", what, last)
		}
	}
}

// hasTools is a waitTools condition: the registration declares every tool in want.
func hasTools(want ...string) func([]string) bool {
	return func(names []string) bool {
		return !slices.ContainsFunc(want, func(n string) bool { return !slices.Contains(names, n) })
	}
}

// daemonUnderTest is a Daemon running on its own goroutine, reading the config file path.
type daemonUnderTest struct {
	d        *Daemon
	path     string
	reloaded chan error // each reload's outcome, from Options.Reloaded
	stdout   logbuf.Buffer
	stderr   logbuf.Buffer
	cancel   context.CancelFunc
	done     chan error
}

func startDaemon(t *testing.T, config string, getenv func(string) string) *daemonUnderTest {
	t.Helper()
	d := &daemonUnderTest{path: filepath.Join(t.TempDir(), "devicectl.yaml"), reloaded: make(chan error, 1), done: make(chan error, 1)}
	d.write(t, config)
	load := func() (*configpkg.Config, error) { return configpkg.Resolve(d.path, nil) }
	c, err := load()
	if err != nil {
		t.Fatal(err)
	}
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	d.d = New(c, &Options{
		Stdout: &d.stdout, Stderr: &d.stderr, Getenv: getenv, Load: load, Version: "test",
		Reloaded: func(err error) { d.reloaded <- err },
	})
	ctx, cancel := context.WithCancel(t.Context())
	d.cancel = cancel
	go func() { d.done <- d.d.Run(ctx) }()
	t.Cleanup(func() { d.stop(t) })
	return d
}

func (d *daemonUnderTest) write(t *testing.T, config string) {
	t.Helper()
	if err := os.WriteFile(d.path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
}

// reload rewrites the config file and asks the daemon to reload, as SIGHUP does, then waits for
// the reload to be over and checks the log line that ends it (want: "configuration reloaded",
// "nothing changed" or "reload refused").
func (d *daemonUnderTest) reload(t *testing.T, config, want string) {
	t.Helper()
	before := strings.Count(d.stderr.String(), want)
	d.write(t, config)
	d.d.Reload()
	select {
	case <-d.reloaded:
	case <-time.After(10 * time.Second):
		t.Fatalf("the reload did not end within 10s:\n%s", d.stderr.String())
	}
	if strings.Count(d.stderr.String(), want) == before {
		t.Fatalf("no %q in the log after the reload:\n%s", want, d.stderr.String())
	}
}

func (d *daemonUnderTest) stop(t *testing.T) {
	t.Helper()
	if d.cancel == nil {
		return
	}
	d.cancel()
	d.cancel = nil
	select {
	case err := <-d.done:
		if err != nil {
			t.Errorf("Run: %v; log:\n%s", err, d.stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Errorf("Run did not return 15s after the stop")
	}
}

// TestMain fails the package if a test leaves goroutines behind: every goroutine a daemon starts
// must be gone once it has returned.
func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m)) }
