package device_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
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
	"github.com/devicectl/devicectl/internal/testing/logbuf"
	"github.com/devicectl/devicectl/internal/testing/standin"
	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
	"github.com/devicectl/devicectl/transport"
)

const testMAC = "AA-BB-CC-DD-EE-FF"

func newAgent(t *testing.T, opts device.Options) *device.Agent {
	t.Helper()
	if opts.MAC == "" {
		opts.MAC = testMAC
	}
	if opts.Registry == nil {
		opts.Registry = seedRegistry(t, sim.NewSpeaker(nil), sim.NewFace(nil))
	}
	if opts.Sleep == nil {
		opts.Sleep = (&sleeps{}).sleep
	}
	a, err := device.New(&opts)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func waitDevice(t *testing.T, srv *agenttest.Server) *agenttest.Device {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := srv.WaitDevice(ctx, testMAC)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestRegistersWithHeaders(t *testing.T) {
	checkLeaks(t)
	srv := standin.Start(t, nil)
	a := newAgent(t, device.Options{URL: srv.URL(), ClientID: "0b4f6d2e-3c1a-4f5e-9a7b-1c2d3e4f5a6b", Version: "1.2.3"})
	runAgent(t, a)
	d := waitDevice(t, srv)
	for key, want := range map[string]string{
		"Device-Id":     testMAC,
		"Client-Id":     "0b4f6d2e-3c1a-4f5e-9a7b-1c2d3e4f5a6b",
		"User-Agent":    "devicectl/1.2.3",
		"Authorization": "",
	} {
		if got := d.Header.Get(key); got != want {
			t.Errorf("header %s = %q, want %q", key, got, want)
		}
	}
	if len(d.Tools) != 2 || d.Tools[0].Name != "amplify_volume" {
		t.Errorf("registered tools = %+v", d.Tools)
	}
	// WaitDevice returns once the answer is sent; the device reads it a moment later.
	waitState(t, a, device.Registered)
}

// A server may call a tool the instant it accepts the registration; that call must already see
// the agent registered (get_device_status reports it), although Run's goroutine may not have
// woken from the registration call yet.
func TestCallRightAfterAcceptanceSeesRegistered(t *testing.T) {
	checkLeaks(t)
	srv := standin.Start(t, nil)
	var a *device.Agent
	reg := tools.NewRegistry()
	if err := reg.Add(testTool(t, "state", 0, nil, func(context.Context, json.RawMessage) (any, error) {
		return a.State().String(), nil
	})); err != nil {
		t.Fatal(err)
	}
	a = newAgent(t, device.Options{URL: srv.URL(), Registry: reg})
	runAgent(t, a)
	for i := range 20 {
		d := waitDevice(t, srv)
		resp := standin.Execute(t, d, "state", `{}`)
		if resp.Error != nil || resp.Result == nil || string(*resp.Result) != `"registered"` {
			t.Fatalf("session %d: first call saw %s, want \"registered\"", i, resultOrError(resp))
		}
		d.Close()
		<-d.Done()
	}
}

func resultOrError(r *jsonrpc2.Response) string {
	if r.Error != nil {
		return r.Error.Error()
	}
	if r.Result == nil {
		return "no result"
	}
	return string(*r.Result)
}

// waitState waits until a is in state want; it wakes on each change of state, not by polling.
func waitState(t *testing.T, a *device.Agent, want device.State) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := a.WaitState(ctx, want); err != nil {
		t.Fatal(err)
	}
}

func TestReconnectsAndRegistersAgainAfterADrop(t *testing.T) {
	checkLeaks(t)
	srv := standin.Start(t, nil)
	var sl sleeps
	a := newAgent(t, device.Options{URL: srv.URL(), Sleep: sl.sleep})
	runAgent(t, a)
	for i := range 3 {
		d := waitDevice(t, srv)
		if resp := standin.Execute(t, d, "amplify_volume", `{"level":30}`); resp.Error != nil {
			t.Fatalf("drop %d: execute failed: %v", i, resp.Error)
		}
		d.Close()
		select {
		case <-d.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("server did not notice the drop")
		}
	}
	d := waitDevice(t, srv)
	if resp := standin.Execute(t, d, "amplify_volume", `{"level":31}`); resp.Error != nil {
		t.Fatalf("after the drops: %v", resp.Error)
	}
	if n := len(sl.all()); n != 3 {
		t.Errorf("backed off %d times for 3 drops, want 3", n)
	}
	for _, w := range sl.all() {
		if w < 500*time.Millisecond || w > 30*time.Second {
			t.Errorf("back-off wait %v outside [500ms, 30s]", w)
		}
	}
}

func TestRefusedRegistrationBacksOff(t *testing.T) {
	checkLeaks(t)
	var attempts atomic.Int32
	const refusals = 6
	srv := standin.Start(t, &agenttest.Options{Register: func(ctx context.Context, d *agenttest.Device) *jsonrpc2.Error {
		if attempts.Add(1) <= refusals {
			return &jsonrpc2.Error{Code: -32000, Message: "unknown device"}
		}
		return nil
	}})
	var sl sleeps
	a := newAgent(t, device.Options{URL: srv.URL(), Sleep: sl.sleep, Backoff: device.Backoff{Min: 100 * time.Millisecond, Max: time.Second}})
	runAgent(t, a)
	waitDevice(t, srv)
	waits := sl.all()
	if len(waits) != refusals {
		t.Fatalf("%d refusals, %d back-off waits (%v): every refusal must wait", refusals, len(waits), waits)
	}
	if got := attempts.Load(); got != refusals+1 {
		t.Errorf("%d registration attempts, want %d", got, refusals+1)
	}
	for i, w := range waits {
		ceiling := min(time.Second, 100*time.Millisecond<<(i+1))
		if w < 100*time.Millisecond || w > ceiling {
			t.Errorf("wait %d = %v, want within [100ms, %v]", i, w, ceiling)
		}
	}
}

// The back-off starts again from its base after a line that served (docs/protocol.md "Session"), and
// climbs while the server drops the device right after accepting it. The device's clock is a fake
// one the test moves, and every wait is drawn at its ceiling, Min·2^(n+1), so the waits say which
// attempt the device thought it was on.
func TestBackoffAfterARegisteredLine(t *testing.T) {
	const minWait = 100 * time.Millisecond
	climbing := []time.Duration{2 * minWait, 4 * minWait, 8 * minWait, 16 * minWait}
	fresh := []time.Duration{2 * minWait, 2 * minWait, 2 * minWait, 2 * minWait}
	for _, tc := range []struct {
		name   string
		during func(t *testing.T, d *agenttest.Device, clock *fakeClock) // between registration and drop
		want   []time.Duration
	}{
		{"dropped right after registering", func(*testing.T, *agenttest.Device, *fakeClock) {}, climbing},
		{"dropped after 2s, no call", func(_ *testing.T, _ *agenttest.Device, c *fakeClock) { c.Advance(2 * time.Second) }, climbing},
		{"served 8s", func(_ *testing.T, _ *agenttest.Device, c *fakeClock) { c.Advance(8 * time.Second) }, fresh},
		{"answered a call", func(t *testing.T, d *agenttest.Device, _ *fakeClock) {
			if resp := standin.Execute(t, d, "amplify_volume", `{"level":3}`); resp.Error != nil {
				t.Fatal(resp.Error)
			}
		}, fresh},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkLeaks(t)
			srv := standin.Start(t, nil)
			var sl sleeps
			a := newAgent(t, device.Options{URL: srv.URL(), Sleep: sl.sleep, Backoff: device.Backoff{Min: minWait, Max: time.Minute}})
			clock := newFakeClock()
			a.SetTestClock(clock.Now, func() float64 { return 1 })
			runAgent(t, a)
			for range len(tc.want) {
				d := waitDevice(t, srv)
				waitState(t, a, device.Registered)
				tc.during(t, d, clock)
				d.Close()
				<-d.Done()
			}
			waitDevice(t, srv)
			if got := sl.all(); !slices.Equal(got, tc.want) {
				t.Errorf("back-off waits %v, want %v", got, tc.want)
			}
		})
	}
}

func TestUnansweredRegistrationTimesOut(t *testing.T) {
	checkLeaks(t)
	var attempts atomic.Int32
	srv := standin.Start(t, &agenttest.Options{Register: func(ctx context.Context, d *agenttest.Device) *jsonrpc2.Error {
		if attempts.Add(1) == 1 {
			<-ctx.Done() // never answer the first one
		}
		return nil
	}})
	var sl sleeps
	a := newAgent(t, device.Options{URL: srv.URL(), Sleep: sl.sleep, RegisterTimeout: 100 * time.Millisecond})
	runAgent(t, a)
	waitDevice(t, srv)
	if n := len(sl.all()); n != 1 {
		t.Errorf("%d back-off waits, want 1 after the unanswered registration", n)
	}
}

func TestStreamedChunksRenderInOrder(t *testing.T) {
	checkLeaks(t)
	srv := standin.Start(t, nil)
	var out logbuf.Buffer
	r := device.NewRenderer(&out, io.Discard, nil)
	a := newAgent(t, device.Options{URL: srv.URL(), Render: r.Render})
	runAgent(t, a)
	d := waitDevice(t, srv)
	ctx := context.Background()
	var want strings.Builder
	for i := range 300 {
		chunk := fmt.Sprintf("<%d>", i)
		want.WriteString(chunk)
		if err := d.Message(ctx, protocol.MessageChunk, chunk); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Message(ctx, protocol.MessageFinal, want.String()); err != nil {
		t.Fatal(err)
	}
	want.WriteString("\n")
	waitRendered(t, &out, want.String(), "300 chunks")
}

// stuckRegistry is the seed's tools on sim parts plus "stuck", on a part of its own, which closes
// running when it starts and returns "done" once release is closed.
func stuckRegistry(t *testing.T) (reg *tools.Registry, running, release chan struct{}) {
	t.Helper()
	running, release = make(chan struct{}), make(chan struct{})
	reg = seedRegistry(t, sim.NewSpeaker(nil), sim.NewFace(nil))
	if err := reg.Add(testTool(t, "stuck", time.Minute, []string{"motor"}, func(ctx context.Context, _ json.RawMessage) (any, error) {
		close(running)
		return heldUntil(ctx, release)
	})); err != nil {
		t.Fatal(err)
	}
	return reg, running, release
}

// A slow tool holds up neither the line's messages nor other tools: the reader, which runs a call
// that starts at once itself, hands the reading to another goroutine once it has run watchLimit.
func TestSlowToolDelaysNeitherMessagesNorOtherTools(t *testing.T) {
	checkLeaks(t)
	srv := standin.Start(t, nil)
	reg, running, release := stuckRegistry(t)
	var out logbuf.Buffer
	r := device.NewRenderer(&out, io.Discard, nil)
	a := newAgent(t, device.Options{URL: srv.URL(), Registry: reg, Render: r.Render})
	runAgent(t, a)
	d := waitDevice(t, srv)

	stuck := make(chan *jsonrpc2.Response, 1)
	go func() { stuck <- standin.Execute(t, d, "stuck", `{}`) }()
	<-running // on the reader, which started it with nothing ahead of it
	if resp := standin.Execute(t, d, "amplify_volume", `{"level":5}`); resp.Error != nil {
		t.Fatalf("another tool while one is stuck: %v", resp.Error)
	}
	if err := d.Say(context.Background(), "still talking"); err != nil {
		t.Fatal(err)
	}
	waitRendered(t, &out, "still talking\n", "reply while a tool is stuck")
	close(release)
	if resp := <-stuck; resp.Error != nil || string(*resp.Result) != `"done"` {
		t.Errorf("stuck tool answered %+v", resp)
	}
}

// A slow tool does not hold up the answers of the calls that came with it either: the line's
// writes wait while its reader works through what it read, and no longer than that.
func TestSlowToolHoldsNoOtherAnswer(t *testing.T) {
	checkLeaks(t)
	srv := standin.Start(t, nil)
	reg, running, release := stuckRegistry(t)
	a := newAgent(t, device.Options{URL: srv.URL(), Registry: reg})
	runAgent(t, a)
	d := waitDevice(t, srv)

	// Sent together, so that the device may well read both at once, in either order.
	quick, stuck := make(chan *jsonrpc2.Response, 1), make(chan *jsonrpc2.Response, 1)
	go func() { stuck <- standin.Execute(t, d, "stuck", `{}`) }()
	go func() { quick <- standin.Execute(t, d, "amplify_volume", `{"level":5}`) }()
	select {
	case resp := <-quick:
		if resp.Error != nil {
			t.Errorf("the quick call: %v", resp.Error)
		}
	case <-time.After(10 * time.Second): // it comes within a millisecond; this only bounds the wait
		t.Error("the quick call's answer waited for the stuck call")
	}
	<-running
	close(release)
	if resp := <-stuck; resp.Error != nil || string(*resp.Result) != `"done"` {
		t.Errorf("stuck tool answered %+v", resp)
	}
}

func TestCallsOnOneResourceNeverOverlap(t *testing.T) {
	checkLeaks(t)
	srv := standin.Start(t, nil)
	reg := tools.NewRegistry()
	var active, peak atomic.Int32
	var others atomic.Int32
	var otherPeak atomic.Int32
	track := func(cur, top *atomic.Int32) tools.Handler {
		return func(ctx context.Context, _ json.RawMessage) (any, error) {
			n := cur.Add(1)
			for {
				p := top.Load()
				if n <= p || top.CompareAndSwap(p, n) {
					break
				}
			}
			time.Sleep(5 * time.Millisecond)
			cur.Add(-1)
			return "ok", nil
		}
	}
	for _, tool := range []*tools.Tool{
		testTool(t, "volume_up", 0, []string{"speaker"}, track(&active, &peak)),
		testTool(t, "volume_down", 0, []string{"speaker"}, track(&active, &peak)),
		testTool(t, "free_a", 0, nil, track(&others, &otherPeak)),
		testTool(t, "free_b", 0, nil, track(&others, &otherPeak)),
	} {
		if err := reg.Add(tool); err != nil {
			t.Fatal(err)
		}
	}
	a := newAgent(t, device.Options{URL: srv.URL(), Registry: reg, MaxInFlight: 64})
	runAgent(t, a)
	d := waitDevice(t, srv)
	var wg sync.WaitGroup
	for i := range 40 {
		name := []string{"volume_up", "volume_down", "free_a", "free_b"}[i%4]
		wg.Go(func() {
			if resp := standin.Execute(t, d, name, `{}`); resp.Error != nil {
				t.Errorf("%s: %v", name, resp.Error)
			}
		})
	}
	wg.Wait()
	if p := peak.Load(); p != 1 {
		t.Errorf("%d calls drove the speaker at once, want 1", p)
	}
	// The control: tools with no shared resource do overlap, so the check above can fail.
	if p := otherPeak.Load(); p < 2 {
		t.Errorf("independent tools peaked at %d concurrent calls; want them to overlap", p)
	}
}

// TestBurstAnsweredExactlyOnce sends 200 executes back to back on the raw wire and checks that each
// id is answered exactly once (a result or -32002) and nothing else arrives.
func TestBurstAnsweredExactlyOnce(t *testing.T) {
	for _, inFlight := range []int{8, 256} {
		t.Run(fmt.Sprintf("in_flight_%d", inFlight), func(t *testing.T) {
			checkLeaks(t)
			l := registeredLine(t, device.Options{MaxInFlight: inFlight})
			const n = 200
			for i := range n {
				l.send(websocket.MessageText, fmt.Sprintf(`{"jsonrpc":"2.0","method":"mcp/tool/execute","params":{"tool_name":"amplify_volume","tool_input":{"level":%d}},"id":"c%d"}`, i%101, i))
			}
			seen := map[string]int{}
			ok, busy := 0, 0
			for range n {
				var resp struct {
					ID     string          `json:"id"`
					Result json.RawMessage `json:"result"`
					Error  *struct{ Code int }
				}
				if err := json.Unmarshal(l.recv(), &resp); err != nil {
					t.Fatal(err)
				}
				seen[resp.ID]++
				switch {
				case resp.Error == nil:
					ok++
				case resp.Error.Code == protocol.CodeBusy:
					busy++
				default:
					t.Errorf("%s: unexpected error %d", resp.ID, resp.Error.Code)
				}
			}
			for i := range n {
				if id := fmt.Sprintf("c%d", i); seen[id] != 1 {
					t.Errorf("%s answered %d times", id, seen[id])
				}
			}
			// Nothing more is pending: a probe's answer is the very next frame.
			l.send(websocket.MessageText, `{"jsonrpc":"2.0","method":"probe","id":"probe"}`)
			if got := l.recv(); !strings.Contains(string(got), `"probe"`) {
				t.Errorf("after the burst the device sent %s, want the probe's answer", got)
			}
			if inFlight >= n && busy != 0 {
				t.Errorf("%d busy answers with room for %d calls", busy, inFlight)
			}
			t.Logf("in flight %d: %d results, %d busy", inFlight, ok, busy)
		})
	}
}

// Registration is the first frame an Agent sends, byte for byte: what `devicectl tools` prints.
func TestRegistrationIsTheFirstFrame(t *testing.T) {
	checkLeaks(t)
	p := newPeer(t)
	reg := seedRegistry(t, sim.NewSpeaker(nil), sim.NewFace(nil))
	runAgent(t, newAgent(t, device.Options{URL: p.url(), Registry: reg}))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sent := p.accept(ctx).recv()
	want, err := device.Registration(testMAC, reg.Declarations())
	if err != nil {
		t.Fatal(err)
	}
	if string(sent) != string(want) {
		t.Errorf("the agent sent\n%s\nRegistration is\n%s", sent, want)
	}
}

func TestOversizedFrameReconnects(t *testing.T) {
	checkLeaks(t)
	p := newPeer(t)
	a := newAgent(t, device.Options{URL: p.url(), Dial: &transport.DialOptions{ReadLimit: 64 << 10}})
	runAgent(t, a)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l := p.acceptRegistered(ctx)
	big := `{"jsonrpc":"2.0","method":"mcp/ai/message","params":{"type":"chunk","content":"` + strings.Repeat("x", 128<<10) + `"}}`
	l.send(websocket.MessageText, big)
	if _, _, err := l.c.Read(ctx); websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
		t.Errorf("oversized frame: line ended with %v, want close 1009", err)
	}
	l2 := p.accept(ctx)
	var reg struct{ ID, Method string }
	if err := json.Unmarshal(l2.recv(), &reg); err != nil || reg.Method != protocol.MethodRegisterTools || reg.ID != "reg-2" {
		t.Errorf("after the oversized frame: %+v %v, want a new registration reg-2", reg, err)
	}
}

// TestHalfOpenLineDetected freezes a TCP proxy between device and server: no RST, no FIN, nothing
// arrives. Only the keepalive can notice; the device must then reconnect on its own.
func TestHalfOpenLineDetected(t *testing.T) {
	checkLeaks(t)
	srv := standin.Start(t, nil)
	px := newProxy(t, strings.TrimSuffix(strings.TrimPrefix(srv.URL(), "ws://"), "/"))
	var states sync.Map
	lost := make(chan error, 10)
	a := newAgent(t, device.Options{
		URL:        "ws://" + px.addr() + "/",
		Dial:       &transport.DialOptions{PingInterval: 100 * time.Millisecond, PingTimeout: 200 * time.Millisecond},
		OnState:    func(s device.State) { states.Store(s, true) },
		OnLineLost: func(err error) { lost <- err },
	})
	runAgent(t, a)
	first := waitDevice(t, srv)
	if e := nextEvent(t, srv); e.Kind != agenttest.Registered || e.Device != first {
		t.Fatalf("first event %v, want the first registration", e.Kind)
	}
	px.freeze()
	for {
		e := nextEvent(t, srv) // fails the test after 10s without one
		if e.Kind == agenttest.Registered && e.Device != first {
			if resp := standin.Execute(t, e.Device, "amplify_volume", `{"level":1}`); resp.Error != nil {
				t.Fatalf("after recovery: %v", resp.Error)
			}
			break
		}
	}
	if _, ok := states.Load(device.BackingOff); !ok {
		t.Error("never backed off after the dead line")
	}
	// The reason logged and handed to hooks names the keepalive, not the socket it closed.
	if err := <-lost; !errors.Is(err, transport.ErrPingTimeout) {
		t.Errorf("the line was lost with %v, want the ping timeout", err)
	}
	first.Close()
}

func TestStopDrainsRunningCallsAndClosesNormally(t *testing.T) {
	checkLeaks(t)
	p := newPeer(t)
	reg := seedRegistry(t, sim.NewSpeaker(nil), sim.NewFace(nil))
	started, finish := addDrainedTool(t, reg, "takes_a_while", 0)
	a := newAgent(t, device.Options{URL: p.url(), Registry: reg})
	stop := runAgent(t, a)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l := p.acceptRegistered(ctx)
	l.send(websocket.MessageText, `{"jsonrpc":"2.0","method":"mcp/tool/execute","params":{"tool_name":"takes_a_while","tool_input":{}},"id":"w"}`)
	<-started
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	// The call is still running when the stop begins; it finishes only once the agent drains.
	waitState(t, a, device.Stopping)
	close(finish)
	if got := l.recv(); !sameJSON(got, []byte(`{"jsonrpc":"2.0","id":"w","result":"finished"}`)) {
		t.Errorf("running call at stop answered %s", got)
	}
	if _, _, err := l.c.Read(ctx); websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Errorf("line ended with %v, want 1000", err)
	}
	<-stopped
	if a.State() != device.Stopped {
		t.Errorf("state after Run = %v", a.State())
	}
}

// proxy is a TCP relay whose open connections can be frozen: bytes stop flowing both ways, but
// neither side sees a close, as when a Wi-Fi link or a NAT entry dies.
type proxy struct {
	t      *testing.T
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
	frozen chan struct{}
	wg     sync.WaitGroup
}

func newProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	px := &proxy{t: t, ln: ln, target: target, frozen: make(chan struct{})}
	px.wg.Add(1)
	go px.serve()
	t.Cleanup(func() {
		ln.Close()
		px.mu.Lock()
		for _, c := range px.conns {
			c.Close()
		}
		px.mu.Unlock()
		px.wg.Wait()
	})
	return px
}

func (px *proxy) addr() string { return px.ln.Addr().String() }

// freeze stalls every connection open now; later ones flow normally.
func (px *proxy) freeze() {
	px.mu.Lock()
	defer px.mu.Unlock()
	close(px.frozen)
	px.frozen = make(chan struct{})
}

func (px *proxy) serve() {
	defer px.wg.Done()
	for {
		c, err := px.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", px.target)
		if err != nil {
			c.Close()
			continue
		}
		px.mu.Lock()
		px.conns = append(px.conns, c, up)
		frozen := px.frozen
		px.mu.Unlock()
		px.wg.Add(2)
		go px.pipe(c, up, frozen)
		go px.pipe(up, c, frozen)
	}
}

func (px *proxy) pipe(dst, src net.Conn, frozen <-chan struct{}) {
	defer px.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if err != nil {
			dst.Close()
			return
		}
		select {
		case <-frozen:
			continue // swallow: the line is dead but nobody is told
		default:
		}
		if _, err := dst.Write(buf[:n]); err != nil {
			return
		}
	}
}

// Check, the watchdog's question, says the loop is stuck when a step outlasts its bound, and is
// content while a registered line is heard from.
func TestCheck(t *testing.T) {
	checkLeaks(t)
	// A back-off of 1ms that never returns: the loop is stuck in it.
	url := refusedURL(t)
	asleep := make(chan struct{}, 1)
	stuck := func(ctx context.Context, _ time.Duration) error {
		select {
		case asleep <- struct{}{}:
		default:
		}
		<-ctx.Done()
		return ctx.Err()
	}
	a := newAgent(t, device.Options{URL: url, Backoff: device.Backoff{Min: time.Millisecond, Max: time.Millisecond}, Sleep: stuck})
	clock := newFakeClock()
	a.SetTestClock(clock.Now, rand.Float64)
	runAgent(t, a)
	<-asleep
	if err := a.Check(); err != nil {
		t.Errorf("Check at the start of a back-off = %v, want nil", err)
	}
	// Within the bound's slack (a second), then past it.
	clock.Advance(900 * time.Millisecond)
	if err := a.Check(); err != nil {
		t.Errorf("Check 900ms into a 1ms back-off = %v, want nil (within the slack)", err)
	}
	clock.Advance(200 * time.Millisecond)
	if err := a.Check(); err == nil || !strings.Contains(err.Error(), "backing off for 1.1s") {
		t.Errorf("Check 1.1s into a 1ms back-off = %v, want it to name the stuck back-off", err)
	}

	// Registered, with pongs every 20ms: content for longer than a ping interval and timeout.
	srv := standin.Start(t, nil)
	b := newAgent(t, device.Options{URL: srv.URL(), Dial: &transport.DialOptions{PingInterval: 20 * time.Millisecond, PingTimeout: 50 * time.Millisecond}})
	runAgent(t, b)
	waitDevice(t, srv)
	waitState(t, b, device.Registered)
	// No signal says "a pong came" (coder/websocket answers pings inside its reader), so this
	// checks at every ping interval until the span Check would judge a silent line by (ping 20ms +
	// timeout 50ms + its 1s slack) has passed with pongs alone keeping the line heard.
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for end := time.Now().Add(1500 * time.Millisecond); time.Now().Before(end); <-tick.C {
		if err := b.Check(); err != nil {
			t.Fatalf("Check on a live line = %v", err)
		}
	}
}

// A server that closes the line on purpose (stopping, restarting) is reconnected to without a
// warning; a line that breaks is warned of.
func TestServerCloseIsNoFault(t *testing.T) {
	checkLeaks(t)
	srv := standin.Start(t, nil)
	var logs logbuf.Buffer
	a := newAgent(t, device.Options{URL: srv.URL(), Logger: logs.Logger()})
	runAgent(t, a)
	d := waitDevice(t, srv)
	d.Close() // close 1000
	<-d.Done()
	waitDevice(t, srv) // registered again
	got := logs.String()
	if !strings.Contains(got, `level=INFO msg="the server closed the line"`) || strings.Contains(got, "level=WARN") {
		t.Errorf("a server's normal close was logged as:\n%s", got)
	}
}

// One Ctrl-C stops the server and this device together: the server's close reaches the device
// just before its own stop does. The device must stop without a "reconnecting" behind it.
func TestStopWithTheServerLeavesNoRetryLine(t *testing.T) {
	checkLeaks(t)
	srv := standin.Start(t, nil)
	var logs logbuf.Buffer
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	a := newAgent(t, device.Options{URL: srv.URL(), Logger: logs.Logger(), Sleep: func(ctx context.Context, _ time.Duration) error {
		stop() // the device's own SIGINT, arriving as it starts to wait
		<-ctx.Done()
		return ctx.Err()
	}})
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	d := waitDevice(t, srv)
	d.Close() // the server's close, first
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := logs.String(); strings.Contains(got, "retrying") || strings.Contains(got, "reconnecting") {
		t.Errorf("a device stopped with its server logged a retry:\n%s", got)
	}
}
