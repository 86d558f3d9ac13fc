package device_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/sourcegraph/jsonrpc2"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/device/agenttest"
	"github.com/devicectl/devicectl/hal/sim"
	"github.com/devicectl/devicectl/internal/testing/standin"
	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
	"github.com/devicectl/devicectl/transport"
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
	srv := standin.Start(t, &agenttest.Options{Register: func(context.Context, *agenttest.Device) *jsonrpc2.Error {
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
	if resp := standin.Execute(t, e.Device, "beta", `{}`); resp.Error != nil || string(*resp.Result) != `"beta"` {
		t.Errorf("calling the new tool: %s", resultOrError(resp))
	}

	// A registry declaring the same tools (a timeout changed, say) is served without a word to
	// the server: the next registration the server sees is the one of the change after it.
	a.SetRegistry(registryOf(t, "alpha", "beta"))
	if resp := standin.Execute(t, e.Device, "alpha", `{}`); resp.Error != nil {
		t.Errorf("calling alpha after an unchanged registry: %s", resultOrError(resp))
	}
	a.SetRegistry(registryOf(t, "gamma"))
	e = nextEvent(t, srv)
	if !slices.Equal(toolNamesOf(e.Device), []string{"gamma"}) {
		t.Errorf("next registration declared %v, want [gamma]: the unchanged registry was sent", toolNamesOf(e.Device))
	}
	if n := registrations.Load(); n != 3 {
		t.Errorf("server saw %d registrations, want 3 (the first and the two changes)", n)
	}
}

// A tool removed by SetRegistry is unknown to calls that arrive afterwards, while the line stays up.
func TestSetRegistryRemovesTools(t *testing.T) {
	checkLeaks(t)
	srv := standin.Start(t, nil)
	a := newAgent(t, device.Options{URL: srv.URL(), Registry: registryOf(t, "alpha", "beta")})
	runAgent(t, a)
	nextEvent(t, srv)
	a.SetRegistry(registryOf(t, "alpha"))
	e := nextEvent(t, srv)
	if !slices.Equal(toolNamesOf(e.Device), []string{"alpha"}) {
		t.Fatalf("re-registered %v, want [alpha]", toolNamesOf(e.Device))
	}
	resp := standin.Execute(t, e.Device, "beta", `{}`)
	if resp.Error == nil || resp.Error.Code != protocol.CodeInvalidParams {
		t.Errorf("calling the removed tool: %s, want -32602", resultOrError(resp))
	}
}

// Restart replaces the options and reconnects at once: the old line is closed normally, the new
// session uses the new settings (here the MAC and the server), and no back-off is waited.
func TestRestartReconnectsWithNewOptions(t *testing.T) {
	checkLeaks(t)
	oldSrv := standin.Start(t, nil)
	newSrv := standin.Start(t, nil)
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
	if resp := standin.Execute(t, e.Device, "amplify_volume", `{"level": 5}`); resp.Error != nil {
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

// backingOff starts an agent with reg on a URL where nothing listens, whose back-off waits end only
// when cut short, and returns once it backs off: with the options it runs on, for a Restart to
// change, and a count of the back-off waits it began.
func backingOff(t *testing.T, reg *tools.Registry) (a *device.Agent, opts device.Options, waits *atomic.Int32) {
	t.Helper()
	waits = new(atomic.Int32)
	opts = device.Options{URL: "ws://127.0.0.1:1/", MAC: testMAC, Registry: reg, Sleep: func(ctx context.Context, _ time.Duration) error {
		waits.Add(1)
		<-ctx.Done()
		return ctx.Err()
	}}
	a = newAgent(t, opts)
	runAgent(t, a)
	waitState(t, a, device.BackingOff)
	return a, opts, waits
}

// A Restart while the agent backs off from a dead server cuts the wait short.
func TestRestartCutsBackOffShort(t *testing.T) {
	checkLeaks(t)
	srv := standin.Start(t, nil)
	a, opts, waits := backingOff(t, registryOf(t, "alpha"))
	opts.URL = srv.URL()
	if err := a.Restart(&opts); err != nil {
		t.Fatal(err)
	}
	waitDevice(t, srv)
	if n := waits.Load(); n != 1 {
		t.Errorf("%d back-off waits, want the one cut short", n)
	}
}

// A SetRegistry right after a Restart, before the agent has acted on it, is not lost: the new
// session declares the registry set last, whether the Restart was still waiting or under way.
func TestSetRegistryAfterRestartWins(t *testing.T) {
	checkLeaks(t)
	srv := standin.Start(t, nil)
	a, opts, _ := backingOff(t, registryOf(t, "alpha"))
	opts.URL = srv.URL()
	opts.Registry = registryOf(t, "beta")
	if err := a.Restart(&opts); err != nil {
		t.Fatal(err)
	}
	a.SetRegistry(registryOf(t, "gamma"))
	// The new session may have declared beta before SetRegistry ran; then gamma follows on the
	// same line. A lost SetRegistry never declares gamma, and nextEvent fails after 10s.
	e := nextEvent(t, srv)
	for e.Kind != agenttest.Registered || !slices.Equal(toolNamesOf(e.Device), []string{"gamma"}) {
		if e.Kind != agenttest.Registered || !slices.Equal(toolNamesOf(e.Device), []string{"beta"}) {
			t.Fatalf("after the restart: %v with %v, want registered [beta] or [gamma]", e.Kind, toolNamesOf(e.Device))
		}
		e = nextEvent(t, srv)
	}
	if resp := standin.Execute(t, e.Device, "gamma", `{}`); resp.Error != nil {
		t.Errorf("calling gamma: %s", resultOrError(resp))
	}
}

func TestRestartRejectsBadOptions(t *testing.T) {
	srv := standin.Start(t, nil)
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
	srv := standin.Start(t, nil)
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
		{"fails", "", protocol.CodeServerError, "the lid is open"},
		{"slow", "", protocol.CodeToolTimeout, "tool timed out after 50ms"},
	} {
		standin.Execute(t, d, tc.tool, `{}`)
		var r device.CallReport
		select {
		case r = <-reports:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no report", tc.tool)
		}
		result := ""
		if r.Result != nil {
			b, _ := json.Marshal(r.Result)
			result = string(b)
		}
		if r.Tool != tc.tool || result != tc.result || r.Code != tc.code || r.Message != tc.message || string(r.Input) != `{}` {
			t.Errorf("%s: report %+v, want result %s code %d message %q", tc.tool, r, tc.result, tc.code, tc.message)
		}
		if r.Duration <= 0 {
			t.Errorf("%s: duration %v", tc.tool, r.Duration)
		}
	}
	// Refused calls never ran: no report.
	standin.Execute(t, d, "nope", `{}`)

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

// A Restart cuts short a dial to a server that never answers the handshake.
func TestRestartCutsADialShort(t *testing.T) {
	checkLeaks(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept() // and never answer
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	}()
	srv := standin.Start(t, nil)
	opts := device.Options{URL: "ws://" + ln.Addr().String() + "/", MAC: testMAC, Registry: registryOf(t, "alpha"),
		Dial: &transport.DialOptions{HandshakeTimeout: time.Minute}}
	a := newAgent(t, opts)
	runAgent(t, a)
	waitState(t, a, device.Connecting)
	opts.URL = srv.URL()
	if err := a.Restart(&opts); err != nil {
		t.Fatal(err)
	}
	waitDevice(t, srv) // within 10s, where the hung handshake would take a minute
}

// A server that refuses the changed tools ends the session, but not before the calls running on
// it have answered.
func TestRefusedReregistrationDrainsRunningCalls(t *testing.T) {
	checkLeaks(t)
	var n atomic.Int32
	srv := standin.Start(t, &agenttest.Options{Register: func(context.Context, *agenttest.Device) *jsonrpc2.Error {
		if n.Add(1) == 2 {
			return &jsonrpc2.Error{Code: -32000, Message: "no new tools today"}
		}
		return nil
	}})
	reg := tools.NewRegistry()
	started, finish := addDrainedTool(t, reg, "slow", time.Minute)
	a := newAgent(t, device.Options{URL: srv.URL(), Registry: reg, DrainTimeout: 10 * time.Second})
	runAgent(t, a)
	d := waitDevice(t, srv)
	answered := make(chan *jsonrpc2.Response, 1)
	go func() {
		resp, err := d.Execute(context.Background(), "slow", json.RawMessage(`{}`))
		if err != nil {
			t.Errorf("the running call got no answer: %v", err)
		}
		answered <- resp
	}()
	<-started
	a.SetRegistry(registryOf(t, "other"))
	waitState(t, a, device.Stopping) // refused, draining
	close(finish)
	if resp := <-answered; resp == nil || resp.Error != nil || string(*resp.Result) != `"finished"` {
		t.Errorf("the running call was answered %s, want its result", resultOrError(resp))
	}
	if e := nextEvent(t, srv); e.Kind != agenttest.Registered {
		t.Errorf("first event %v, want the first registration", e.Kind)
	}
	if e := nextEvent(t, srv); e.Kind != agenttest.Disconnected {
		t.Errorf("after the refusal: %v, want disconnected", e.Kind)
	}
	if e := nextEvent(t, srv); e.Kind != agenttest.Registered || !slices.Equal(toolNamesOf(e.Device), []string{"other"}) {
		t.Errorf("then %v with %v, want a new line registering [other]", e.Kind, toolNamesOf(e.Device))
	}
}

// A tool stuck past the drain of a Restart keeps its hardware: a call on the next session that
// needs the same part waits (and times out) instead of driving it at the same time.
func TestRestartKeepsHardwareExclusive(t *testing.T) {
	srv := standin.Start(t, nil)
	stuck, unstick := make(chan struct{}), make(chan struct{})
	var overlapped atomic.Bool
	reg := tools.NewRegistry()
	for _, tl := range []*tools.Tool{
		testTool(t, "stuck", time.Minute, []string{"motor"}, func(context.Context, json.RawMessage) (any, error) {
			close(stuck)
			<-unstick // ignores its context, as a hung bus transfer does
			return nil, nil
		}),
		testTool(t, "move", 100*time.Millisecond, []string{"motor"}, func(context.Context, json.RawMessage) (any, error) {
			overlapped.Store(true)
			return nil, nil
		}),
	} {
		if err := reg.Add(tl); err != nil {
			t.Fatal(err)
		}
	}
	opts := device.Options{URL: srv.URL(), MAC: testMAC, Registry: reg, DrainTimeout: 50 * time.Millisecond, Sleep: (&sleeps{}).sleep}
	a := newAgent(t, opts)
	runAgent(t, a)
	defer close(unstick)
	d := waitDevice(t, srv)
	go d.Execute(context.Background(), "stuck", json.RawMessage(`{}`))
	<-stuck
	if e := nextEvent(t, srv); e.Kind != agenttest.Registered {
		t.Fatalf("event %v", e.Kind)
	}
	if err := a.Restart(&opts); err != nil {
		t.Fatal(err)
	}
	var d2 *agenttest.Device
	for d2 == nil {
		if e := nextEvent(t, srv); e.Kind == agenttest.Registered {
			d2 = e.Device
		}
	}
	resp := standin.Execute(t, d2, "move", `{}`)
	if resp.Error == nil || resp.Error.Code != protocol.CodeToolTimeout {
		t.Errorf("move while the motor is held: %s, want -32001", resultOrError(resp))
	}
	if overlapped.Load() {
		t.Error("move ran while stuck still held the motor")
	}
}

// Hold keeps calls off a part while it is replaced; a call that waited runs the new tool.
func TestHoldThenSetRegistry(t *testing.T) {
	checkLeaks(t)
	srv := standin.Start(t, nil)
	tool := func(answer string) *tools.Registry {
		reg := tools.NewRegistry()
		if err := reg.Add(testTool(t, "speak", 5*time.Second, []string{"speaker"}, func(context.Context, json.RawMessage) (any, error) {
			return answer, nil
		})); err != nil {
			t.Fatal(err)
		}
		return reg
	}
	a := newAgent(t, device.Options{URL: srv.URL(), Registry: tool("old part")})
	runAgent(t, a)
	d := waitDevice(t, srv)
	release, err := a.Hold(context.Background(), []string{"speaker"})
	if err != nil {
		t.Fatal(err)
	}
	answered := make(chan *jsonrpc2.Response, 1)
	go func() {
		resp, _ := d.Execute(context.Background(), "speak", json.RawMessage(`{}`))
		answered <- resp
	}()
	select {
	case resp := <-answered:
		t.Fatalf("the call ran while the speaker was held: %s", resultOrError(resp))
	case <-time.After(100 * time.Millisecond):
	}
	a.SetRegistry(tool("new part"))
	release()
	if resp := <-answered; resp == nil || resp.Error != nil || string(*resp.Result) != `"new part"` {
		t.Errorf("the call that waited was answered %s, want the new tool's answer", resultOrError(resp))
	}
}

// A call whose deadline passes while another holds its hardware is answered -32001, not left
// without an answer.
func TestTimeoutWaitingForHardwareIsAnswered(t *testing.T) {
	checkLeaks(t)
	srv := standin.Start(t, nil)
	holding, done := make(chan struct{}), make(chan struct{})
	reg := tools.NewRegistry()
	for _, tl := range []*tools.Tool{
		testTool(t, "long", 10*time.Second, []string{"arm"}, func(ctx context.Context, _ json.RawMessage) (any, error) {
			close(holding)
			<-done
			return "long done", nil
		}),
		testTool(t, "short", 50*time.Millisecond, []string{"arm"}, func(context.Context, json.RawMessage) (any, error) {
			return "short done", nil
		}),
	} {
		if err := reg.Add(tl); err != nil {
			t.Fatal(err)
		}
	}
	a := newAgent(t, device.Options{URL: srv.URL(), Registry: reg})
	runAgent(t, a)
	d := waitDevice(t, srv)
	longAnswer := make(chan *jsonrpc2.Response, 1)
	go func() {
		resp, _ := d.Execute(context.Background(), "long", json.RawMessage(`{}`))
		longAnswer <- resp
	}()
	<-holding
	resp := standin.Execute(t, d, "short", `{}`)
	if resp.Error == nil || resp.Error.Code != protocol.CodeToolTimeout || resp.Error.Message != "tool timed out after 50ms" {
		t.Errorf("short while the arm is held: %s, want -32001 tool timed out after 50ms", resultOrError(resp))
	}
	close(done)
	if resp := <-longAnswer; resp == nil || resp.Error != nil {
		t.Errorf("long: %s", resultOrError(resp))
	}
}

// A re-registration the server answers only after RegisterTimeout ends the session like one it
// never answers: running calls answer, the line closes with 1000, and a new line registers. The
// late answer, read while the agent drains, must not hold up the line's read loop.
func TestLateAnswerToReregistration(t *testing.T) {
	checkLeaks(t)
	p := newPeer(t)
	reg := registryOf(t, "alpha")
	started, finish := addDrainedTool(t, reg, "slow", time.Minute)
	a := newAgent(t, device.Options{URL: p.url(), Registry: reg, RegisterTimeout: 100 * time.Millisecond})
	runAgent(t, a)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l := p.acceptRegistered(ctx)
	l.send(websocket.MessageText, `{"jsonrpc":"2.0","method":"mcp/tool/execute","params":{"tool_name":"slow","tool_input":{}},"id":"s"}`)
	<-started

	a.SetRegistry(registryOf(t, "other"))
	var rereg struct{ ID, Method string }
	if err := json.Unmarshal(l.recv(), &rereg); err != nil || rereg.Method != protocol.MethodRegisterTools || rereg.ID != "reg-2" {
		t.Fatalf("after SetRegistry the device sent %+v (%v), want registration reg-2", rereg, err)
	}
	waitState(t, a, device.Stopping) // the answer is overdue: draining
	l.send(websocket.MessageText, `{"jsonrpc":"2.0","id":"reg-2","result":{"status":"registered"}}`)
	close(finish)
	if got := l.recv(); !sameJSON(got, []byte(`{"jsonrpc":"2.0","id":"s","result":"finished"}`)) {
		t.Errorf("the running call answered %s", got)
	}
	if _, _, err := l.c.Read(ctx); websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Errorf("line ended with %v, want 1000", err)
	}
	l2 := p.accept(ctx)
	var again struct {
		ID     string
		Params protocol.RegisterParams[[]tools.Declaration]
	}
	if err := json.Unmarshal(l2.recv(), &again); err != nil || again.ID != "reg-3" || len(again.Params.Tools) != 1 || again.Params.Tools[0].Name != "other" {
		t.Errorf("the next line registered %+v (%v), want reg-3 declaring [other]", again, err)
	}
}
