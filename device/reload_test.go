package device_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/device/agenttest"
	"github.com/devicectl/devicectl/hal/sim"
	"github.com/devicectl/devicectl/tools"
)

// registryOf returns a registry of no-parameter tools, each answering its own name.
func registryOf(t *testing.T, names ...string) *tools.Registry {
	t.Helper()
	reg := tools.NewRegistry()
	for _, name := range names {
		if err := reg.Add(testTool(t, name, 0, nil, func(context.Context, json.RawMessage) (any, error) {
			return name, nil
		})); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

func toolNamesOf(d *agenttest.Device) []string {
	var names []string
	for _, tl := range d.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// nextEvent returns the next event of srv, failing the test if none comes within 10s.
func nextEvent(t *testing.T, srv *agenttest.Server) agenttest.Event {
	t.Helper()
	select {
	case e := <-srv.Events():
		return e
	case <-time.After(10 * time.Second):
		t.Fatal("no event from the server within 10s")
		return agenttest.Event{}
	}
}

// Changed tools are registered again on the line that is up: the server sees a second
// registration from the same connection, and calls from then on run the new tools. The same
// declarations again send nothing.
func TestSetRegistryRegistersChangedToolsOnTheSameLine(t *testing.T) {
	checkLeaks(t)
	var registrations atomic.Int32
	srv := startServer(t, &agenttest.Options{Register: func(context.Context, *agenttest.Device) *jsonrpc2.Error {
		registrations.Add(1)
		return nil
	}})
	a := newAgent(t, device.Options{URL: srv.URL(), Registry: registryOf(t, "alpha")})
	runAgent(t, a)
	if e := nextEvent(t, srv); e.Kind != agenttest.Registered || !slices.Equal(toolNamesOf(e.Device), []string{"alpha"}) {
		t.Fatalf("first event %v with tools %v, want registered [alpha]", e.Kind, toolNamesOf(e.Device))
	}
	first := waitDevice(t, srv)
	waitState(t, a, device.Registered)

	a.SetRegistry(registryOf(t, "alpha", "beta"))
	e := nextEvent(t, srv)
	if e.Kind != agenttest.Registered || !slices.Equal(toolNamesOf(e.Device), []string{"alpha", "beta"}) {
		t.Fatalf("after SetRegistry: event %v with tools %v, want registered [alpha beta]", e.Kind, toolNamesOf(e.Device))
	}
	if e.Device.RemoteAddr != first.RemoteAddr {
		t.Errorf("re-registered from %s, want the same line %s", e.Device.RemoteAddr, first.RemoteAddr)
	}
	if resp := execute(t, e.Device, "beta", `{}`); resp.Error != nil || string(*resp.Result) != `"beta"` {
		t.Errorf("calling the new tool: %s", resultOrError(resp))
	}

	// A registry declaring the same tools (a timeout changed, say) is served without a word to
	// the server.
	same := registryOf(t, "alpha", "beta")
	a.SetRegistry(same)
	if resp := execute(t, e.Device, "alpha", `{}`); resp.Error != nil {
		t.Errorf("calling alpha after an unchanged registry: %s", resultOrError(resp))
	}
	// The call above was read after SetRegistry's wake-up; let the loop look at it.
	time.Sleep(50 * time.Millisecond)
	if n := registrations.Load(); n != 2 {
		t.Errorf("server saw %d registrations, want 2 (the first and the change)", n)
	}
	select {
	case e := <-srv.Events():
		t.Errorf("unexpected event %v after an unchanged registry", e.Kind)
	default:
	}
}

// A tool removed by SetRegistry is unknown to calls that arrive afterwards, while the line stays up.
func TestSetRegistryRemovesTools(t *testing.T) {
	checkLeaks(t)
	srv := startServer(t, nil)
	a := newAgent(t, device.Options{URL: srv.URL(), Registry: registryOf(t, "alpha", "beta")})
	runAgent(t, a)
	nextEvent(t, srv)
	a.SetRegistry(registryOf(t, "alpha"))
	e := nextEvent(t, srv)
	if !slices.Equal(toolNamesOf(e.Device), []string{"alpha"}) {
		t.Fatalf("re-registered %v, want [alpha]", toolNamesOf(e.Device))
	}
	resp := execute(t, e.Device, "beta", `{}`)
	if resp.Error == nil || resp.Error.Code != device.CodeInvalidParams {
		t.Errorf("calling the removed tool: %s, want -32602", resultOrError(resp))
	}
}

// Restart replaces the options and reconnects at once: the old line is closed normally, the new
// session uses the new settings (here the MAC and the server), and no back-off is waited.
func TestRestartReconnectsWithNewOptions(t *testing.T) {
	checkLeaks(t)
	oldSrv := startServer(t, nil)
	newSrv := startServer(t, nil)
	var lost []error
	var mu sync.Mutex
	onLost := func(err error) {
		mu.Lock()
		lost = append(lost, err)
		mu.Unlock()
	}
	sl := &sleeps{}
	opts := device.Options{URL: oldSrv.URL(), Sleep: sl.sleep, OnLineLost: onLost}
	a := newAgent(t, opts)
	runAgent(t, a)
	if e := nextEvent(t, oldSrv); e.Kind != agenttest.Registered {
		t.Fatalf("event %v, want registered", e.Kind)
	}

	opts.URL = newSrv.URL()
	opts.MAC = "02-00-00-00-00-01"
	opts.Registry = seedRegistry(t, sim.NewSpeaker(nil), sim.NewFace(nil))
	if err := a.Restart(&opts); err != nil {
		t.Fatal(err)
	}
	if e := nextEvent(t, oldSrv); e.Kind != agenttest.Disconnected {
		t.Errorf("old server: event %v, want disconnected", e.Kind)
	}
	e := nextEvent(t, newSrv)
	if e.Kind != agenttest.Registered || e.Device.MAC != "02-00-00-00-00-01" {
		t.Fatalf("new server: event %v from %s, want registered from 02-00-00-00-00-01", e.Kind, e.Device.MAC)
	}
	if resp := execute(t, e.Device, "amplify_volume", `{"level": 5}`); resp.Error != nil {
		t.Errorf("call after restart: %s", resultOrError(resp))
	}
	if got := sl.all(); len(got) != 0 {
		t.Errorf("restart waited %v before reconnecting, want no back-off", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lost) != 1 || lost[0] != nil {
		t.Errorf("OnLineLost got %v, want one nil (the device closed the line)", lost)
	}
}

// A Restart while the agent backs off from a dead server cuts the wait short.
func TestRestartCutsBackOffShort(t *testing.T) {
	checkLeaks(t)
	srv := startServer(t, nil)
	var waits atomic.Int32
	longSleep := func(ctx context.Context, d time.Duration) error {
		waits.Add(1)
		select {
		case <-time.After(time.Hour):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	opts := device.Options{URL: "ws://127.0.0.1:1/", MAC: testMAC, Sleep: longSleep, Registry: registryOf(t, "alpha")}
	a := newAgent(t, opts)
	runAgent(t, a)
	waitState(t, a, device.BackingOff)

	opts.URL = srv.URL()
	if err := a.Restart(&opts); err != nil {
		t.Fatal(err)
	}
	waitDevice(t, srv)
	if n := waits.Load(); n != 1 {
		t.Errorf("%d back-off waits, want the one cut short", n)
	}
}

func TestRestartRejectsBadOptions(t *testing.T) {
	srv := startServer(t, nil)
	a := newAgent(t, device.Options{URL: srv.URL()})
	runAgent(t, a)
	waitDevice(t, srv)
	err := a.Restart(&device.Options{URL: "http://example.com", MAC: testMAC, Registry: registryOf(t, "x")})
	if err == nil || !strings.Contains(err.Error(), "ws://") {
		t.Fatalf("Restart with an http URL: %v, want an error about ws://", err)
	}
	waitState(t, a, device.Registered) // still on the old line
}

// OnCall hears of every call that ran, with what was answered; OnLineLost hears why a line the
// server dropped was lost.
func TestOnCallAndOnLineLost(t *testing.T) {
	checkLeaks(t)
	srv := startServer(t, nil)
	reg := registryOf(t, "ok")
	for _, tl := range []*tools.Tool{
		testTool(t, "fails", 0, nil, func(context.Context, json.RawMessage) (any, error) {
			return nil, errors.New("the lid is open")
		}),
		testTool(t, "slow", 50*time.Millisecond, nil, func(ctx context.Context, _ json.RawMessage) (any, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}),
	} {
		if err := reg.Add(tl); err != nil {
			t.Fatal(err)
		}
	}
	reports := make(chan device.CallReport, 10)
	lost := make(chan error, 10)
	a := newAgent(t, device.Options{URL: srv.URL(), Registry: reg,
		OnCall:     func(r device.CallReport) { reports <- r },
		OnLineLost: func(err error) { lost <- err },
	})
	runAgent(t, a)
	d := waitDevice(t, srv)

	for _, tc := range []struct {
		tool, result string
		code         int64
		message      string
	}{
		{"ok", `"ok"`, 0, ""},
		{"fails", "", device.CodeToolFailed, "the lid is open"},
		{"slow", "", device.CodeToolTimeout, "tool timed out after 50ms"},
	} {
		execute(t, d, tc.tool, `{}`)
		var r device.CallReport
		select {
		case r = <-reports:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no report", tc.tool)
		}
		if r.Tool != tc.tool || string(r.Result) != tc.result || r.Code != tc.code || r.Message != tc.message || string(r.Input) != `{}` {
			t.Errorf("%s: report %+v, want result %s code %d message %q", tc.tool, r, tc.result, tc.code, tc.message)
		}
		if r.Duration <= 0 {
			t.Errorf("%s: duration %v", tc.tool, r.Duration)
		}
	}
	// Refused calls never ran: no report.
	execute(t, d, "nope", `{}`)

	d.Close()
	select {
	case err := <-lost:
		if err == nil || !strings.Contains(err.Error(), "connection lost") {
			t.Errorf("OnLineLost(%v), want the reason the line was lost", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("OnLineLost was not called after the server closed the line")
	}
	select {
	case r := <-reports:
		t.Errorf("unexpected report %+v", r)
	default:
	}
}
