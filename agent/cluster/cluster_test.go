package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/devicectl/devicectl/agent/hub"
	"github.com/devicectl/devicectl/agent/hub/hubtest"
	"github.com/devicectl/devicectl/agent/store"
	"github.com/devicectl/devicectl/agent/store/storetest"
	"github.com/devicectl/devicectl/internal/testing/leakcheck"
	"github.com/devicectl/devicectl/internal/testing/natstest"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m)) }

const (
	macA = "02-CC-00-00-00-01"
	macB = "02-CC-00-00-00-02"
	// testTTL is the shortest TTL: the tests that wait for a hold to expire wait this long.
	testTTL = MinTTL
)

// testNode is one serve node of a test cluster: a hub on a loopback port, and its cluster.
type testNode struct {
	name string
	h    *hub.Hub
	c    *Cluster
	srv  *httptest.Server
	url  string // the devices' ws:// URL
	once sync.Once
}

// startNode starts a node in the cluster on nats; bindings are those the nodes share.
func startNode(t *testing.T, nats, name string, bindings hub.Bindings) *testNode {
	t.Helper()
	c, err := New(t.Context(), &Options{URL: nats, Node: name, TTL: testTTL})
	if err != nil {
		t.Fatal(err)
	}
	n := &testNode{name: name, c: c}
	n.h = hub.New(&hub.Options{Cluster: c, Bindings: bindings})
	if err := c.Start(t.Context()); err != nil {
		n.h.Close()
		c.Close()
		t.Fatal(err)
	}
	n.srv = httptest.NewServer(n.h)
	n.url = "ws" + strings.TrimPrefix(n.srv.URL, "http") + "/"
	t.Cleanup(n.stop)
	return n
}

// stop closes the node as serve does: the hub, whose lines release their holds, then the rest.
func (n *testNode) stop() {
	n.once.Do(func() {
		n.h.Close()
		n.srv.Close()
		n.c.Close()
	})
}

// crash ends the node the way a killed process ends: its NATS connection drops first, so its
// holds stay in the bucket and nobody answers on its subjects, and its devices' lines drop.
func (n *testNode) crash() {
	n.once.Do(func() {
		n.c.nc.Close()
		n.h.Close()
		n.srv.Close()
		n.c.Close()
	})
}

func sharedBindings(t *testing.T) hub.Bindings {
	t.Helper()
	db := storetest.Open(t, storetest.Where(t, store.SQLite))
	b, err := hub.NewSQLBindings(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// next returns the next event of kind for mac, skipping others.
func next(t *testing.T, events <-chan hub.Event, kind hub.EventKind, mac string) hub.Event {
	t.Helper()
	timeout := time.After(15 * time.Second)
	for {
		select {
		case e, ok := <-events:
			if !ok {
				t.Fatalf("events closed while waiting for %v of %s", kind, mac)
			}
			if e.Kind == kind && e.Device.MAC == mac {
				return e
			}
		case <-timeout:
			t.Fatalf("no %v event for %s", kind, mac)
		}
	}
}

// closedFor waits for the Disconnected event of mac, which must be for why, and for the node to
// close d's line.
func closedFor(t *testing.T, events <-chan hub.Event, d *hubtest.Device, mac string, why error) {
	t.Helper()
	if e := next(t, events, hub.Disconnected, mac); !errors.Is(e.Reason, why) {
		t.Errorf("%s disconnected for %v; want %v", mac, e.Reason, why)
	}
	select {
	case <-d.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("the line of %s is still open", mac)
	}
}

// onA starts NATS and nodes a and b (sharing bindings; nil: each its own), and a device of
// options o registered as macA on a, once b lists it there.
func onA(t *testing.T, bindings hub.Bindings, o *hubtest.Options) (srv *natstest.Server, a, b *testNode, d *hubtest.Device) {
	t.Helper()
	srv = natstest.Start(t)
	a = startNode(t, srv.URL(), "a", bindings)
	b = startNode(t, srv.URL(), "b", bindings)
	d = hubtest.Connect(t, a.url, o)
	d.MustRegister(t, macA)
	waitDevice(t, b.h, macA, "a")
	return srv, a, b, d
}

// waitDevice waits until h lists mac on node.
func waitDevice(t *testing.T, h *hub.Hub, mac, node string) hub.Device {
	t.Helper()
	events, stop := h.Subscribe(0)
	defer stop()
	for {
		if d, ok := h.Device(mac); ok && d.Node == node {
			return d
		}
		select {
		case <-events:
		case <-time.After(15 * time.Second):
			d, _ := h.Device(mac)
			t.Fatalf("%s is not listed on node %s (it shows %+v)", mac, node, d)
		}
	}
}

// A device on node a is listed by node b with its tools, and b's calls and messages reach it:
// results, the device's errors with their code and data, schema checks, messages in order.
func TestCallAnotherNodesDevice(t *testing.T) {
	_, _, b, d := onA(t, nil, &hubtest.Options{ClientID: "client-1", Handle: func(_ context.Context, tool string, input json.RawMessage) (json.RawMessage, *jsonrpc2.Error) {
		if tool == "get_status" {
			data := json.RawMessage(`{"details":"the speaker is unplugged"}`)
			return nil, &jsonrpc2.Error{Code: -32000, Message: "执行失败", Data: &data}
		}
		return hubtest.Echo(context.Background(), tool, input)
	}})
	got, _ := b.h.Device(macA)
	if len(got.Tools) != 3 || got.Tools[0].Name != "amplify_volume" {
		t.Errorf("b lists %s with tools %+v; want the three it declared", macA, got.Tools)
	}
	if got.ClientID != "" {
		t.Errorf("b tells the Client-Id of a device on another node: %q", got.ClientID)
	}
	if got := b.h.MACs(); len(got) != 1 || got[0] != macA {
		t.Errorf("b's MACs = %v", got)
	}

	res, err := b.h.Call(ctxFor(t), macA, "amplify_volume", json.RawMessage(`{"level":30}`))
	if err != nil {
		t.Fatalf("call through b: %v", err)
	}
	if !strings.Contains(string(res), `"level":30`) {
		t.Errorf("result %s", res)
	}
	resp, err := b.h.CallRaw(ctxFor(t), macA, "get_status", json.RawMessage(`{}`))
	if err != nil {
		t.Fatalf("call through b: %v", err)
	}
	if resp.Err == nil || resp.Err.Code != -32000 || resp.Err.Message != "执行失败" || resp.Err.Details != "the speaker is unplugged" {
		t.Errorf("the device's error through b: %+v", resp.Err)
	}
	if !strings.Contains(string(resp.Raw), `"code":-32000`) {
		t.Errorf("raw answer %s", resp.Raw)
	}
	if _, err := b.h.Validate(macA, "amplify_volume", json.RawMessage(`{"level":300}`)); err == nil {
		t.Error("b validated level 300 against the device's schema (maximum 100)")
	}

	for i := range 50 {
		if err := b.h.Send(macA, "chunk", fmt.Sprint(i)); err != nil {
			t.Fatalf("send through b: %v", err)
		}
	}
	for i := range 50 {
		select {
		case m := <-d.Messages():
			if m.Content != fmt.Sprint(i) {
				t.Fatalf("message %d is %q: out of order", i, m.Content)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("message %d did not arrive", i)
		}
	}
}

// A call's deadline holds on the device's node: a device that does not answer fails the call
// when the caller's context ends, not later.
func TestCallDeadline(t *testing.T) {
	_, _, b, _ := onA(t, nil, &hubtest.Options{Handle: func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, *jsonrpc2.Error) {
		<-ctx.Done()
		return nil, nil
	}})
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := b.h.Call(ctx, macA, "get_status", json.RawMessage(`{}`))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v; want the deadline", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the call took %s past a 300ms deadline", took)
	}
}

// The rules of a second registration hold across nodes: a live device keeps its MAC against
// another client (or none) on another node, with the same details; the same device (same
// Client-Id) on another node moves there, and its old line is closed.
func TestSecondRegistrationAcrossNodes(t *testing.T) {
	_, a, b, first := onA(t, nil, &hubtest.Options{ClientID: "client-1", Handle: hubtest.Echo})

	for _, id := range []string{"client-2", ""} {
		other := hubtest.Connect(t, b.url, &hubtest.Options{ClientID: id, Handle: hubtest.Echo})
		_, err := other.Register(ctxFor(t), macA, hubtest.Tools)
		if !errors.Is(err, hubtest.ErrRefused) || !strings.Contains(err.Error(), "-32602") ||
			!strings.Contains(err.Error(), "already registered by a live connection from 127.0.0.1") || !strings.Contains(err.Error(), "(node a)") {
			t.Errorf("Client-Id %q on b: %v; want -32602 naming the live connection on node a", id, err)
		}
		other.Close()
	}
	if d, _ := a.h.Device(macA); d.ClientID != "client-1" {
		t.Fatalf("a lost the device: %+v", d)
	}

	events, stop := a.h.Subscribe(0)
	defer stop()
	again := hubtest.Connect(t, b.url, &hubtest.Options{ClientID: "client-1", Handle: hubtest.Echo})
	again.MustRegister(t, macA)
	closedFor(t, events, first, macA, hub.ErrReplaced)
	waitDevice(t, a.h, macA, "b")
	if _, err := a.h.Call(ctxFor(t), macA, "amplify_volume", json.RawMessage(`{"level":5}`)); err != nil {
		t.Fatalf("a calling the device now on b: %v", err)
	}
	if again.Calls() != 1 || first.Calls() != 0 {
		t.Errorf("calls: new line %d, old line %d; want 1 and 0", again.Calls(), first.Calls())
	}
}

// A MAC bound to a client is refused to another client on every node sharing the bindings, even
// while its device is offline.
func TestBindingsAcrossNodes(t *testing.T) {
	_, _, b, d := onA(t, sharedBindings(t), &hubtest.Options{ClientID: "client-1", Handle: hubtest.Echo})
	events, stop := b.h.Subscribe(0)
	defer stop()
	d.Close()
	next(t, events, hub.Disconnected, macA)
	squatter := hubtest.Connect(t, b.url, &hubtest.Options{ClientID: "client-2", Handle: hubtest.Echo})
	if _, err := squatter.Register(ctxFor(t), macA, hubtest.Tools); err == nil || !strings.Contains(err.Error(), "bound to another client") {
		t.Errorf("a squatter on b: %v; want the binding's refusal", err)
	}
	back := hubtest.Connect(t, b.url, &hubtest.Options{ClientID: "client-1", Handle: hubtest.Echo})
	back.MustRegister(t, macA)
}

// A node that dies (its NATS connection drops with it) leaves its holds behind; its devices
// register on another node at once, without waiting for the TTL, and a call in flight to the
// dead node's device ends with ErrGone when the device is back elsewhere.
func TestDeadNodesDevicesMoveAtOnce(t *testing.T) {
	srv := natstest.Start(t)
	a := startNode(t, srv.URL(), "a", nil)
	b := startNode(t, srv.URL(), "b", nil)
	c := startNode(t, srv.URL(), "c", nil)
	hang := make(chan struct{})
	d := hubtest.Connect(t, a.url, &hubtest.Options{ClientID: "client-1", Handle: func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, *jsonrpc2.Error) {
		close(hang)
		<-ctx.Done()
		return nil, nil
	}})
	d.MustRegister(t, macA)
	waitDevice(t, c.h, macA, "a")
	waitDevice(t, b.h, macA, "a")

	inFlight := make(chan error, 1)
	go func() {
		_, err := c.h.Call(ctxFor(t), macA, "get_status", json.RawMessage(`{}`))
		inFlight <- err
	}()
	<-hang
	a.crash()
	<-d.Done()

	start := time.Now()
	moved := hubtest.Connect(t, b.url, &hubtest.Options{ClientID: "client-1", Handle: hubtest.Echo})
	moved.MustRegister(t, macA)
	if took := time.Since(start); took > testTTL/2 {
		t.Errorf("registering on b took %s: the dead node's hold was waited out (TTL %s)", took, testTTL)
	}
	select {
	case err := <-inFlight:
		if !errors.Is(err, hub.ErrGone) {
			t.Errorf("the call in flight to the dead node ended with %v; want ErrGone", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call in flight to the dead node did not end when its device moved")
	}
	waitDevice(t, c.h, macA, "b")
	if _, err := c.h.Call(ctxFor(t), macA, "amplify_volume", json.RawMessage(`{"level":1}`)); err != nil {
		t.Fatalf("calling the device on b from c: %v", err)
	}
}

// A dead node's device that comes back nowhere leaves every node's list within the TTL, and a
// call to it meanwhile fails at once with ErrGone (nobody answers on the dead node's subject).
func TestDeadNodesHoldsExpire(t *testing.T) {
	_, a, b, _ := onA(t, nil, nil)
	events, stop := b.h.Subscribe(0)
	defer stop()
	a.crash()
	start := time.Now()
	if _, err := b.h.Call(ctxFor(t), macA, "amplify_volume", json.RawMessage(`{"level":1}`)); !errors.Is(err, hub.ErrGone) {
		t.Errorf("calling a dead node's device: %v; want ErrGone", err)
	}
	e := next(t, events, hub.Disconnected, macA)
	if took := time.Since(start); took > 2*testTTL {
		t.Errorf("the dead node's device left b's list after %s; TTL %s", took, testTTL)
	}
	if !strings.Contains(e.Reason.Error(), "stopped renewing") {
		t.Errorf("reason %v", e.Reason)
	}
	if _, ok := b.h.Device(macA); ok {
		t.Error("b still lists the device")
	}
}

// A device that leaves its node leaves every node's list; one that declares new tools is listed
// with them everywhere.
func TestLeaveAndToolsChange(t *testing.T) {
	srv := natstest.Start(t)
	a := startNode(t, srv.URL(), "a", nil)
	b := startNode(t, srv.URL(), "b", nil)
	events, stop := b.h.Subscribe(0)
	defer stop()
	d := hubtest.Connect(t, a.url, &hubtest.Options{Handle: hubtest.Echo})
	d.MustRegister(t, macA)
	if e := next(t, events, hub.Registered, macA); e.Device.Node != "a" {
		t.Errorf("Registered on b: %+v", e.Device)
	}
	const one = `[{"name":"blink","description":"Blink.","main_type":"remote","sub_type":"control","parameters":{"type":"object","properties":{}}}]`
	if _, err := d.Register(ctxFor(t), macA, one); err != nil {
		t.Fatal(err)
	}
	if e := next(t, events, hub.ToolsChanged, macA); len(e.Device.Tools) != 1 || e.Device.Tools[0].Name != "blink" {
		t.Errorf("ToolsChanged on b: %+v", e.Device.Tools)
	}
	if _, err := b.h.Call(ctxFor(t), macA, "blink", json.RawMessage(`{}`)); err != nil {
		t.Errorf("calling the new tool from b: %v", err)
	}
	d.Close()
	if e := next(t, events, hub.Disconnected, macA); !strings.Contains(e.Reason.Error(), "left node a") {
		t.Errorf("reason %v", e.Reason)
	}
}

// Every node's subscribers see the calls made on any node's lines, whoever made them.
func TestCallsPublished(t *testing.T) {
	srv := natstest.Start(t)
	a := startNode(t, srv.URL(), "a", nil)
	b := startNode(t, srv.URL(), "b", nil)
	c := startNode(t, srv.URL(), "c", nil)
	d := hubtest.Connect(t, a.url, &hubtest.Options{Handle: hubtest.Echo})
	d.MustRegister(t, macA)
	waitDevice(t, b.h, macA, "a")
	waitDevice(t, c.h, macA, "a")
	seen := map[string]<-chan hub.Event{}
	for _, n := range []*testNode{a, b, c} {
		events, stop := n.h.Subscribe(0)
		defer stop()
		seen[n.name] = events
	}
	for _, level := range []string{"42", "43"} {
		if _, err := b.h.Call(ctxFor(t), macA, "amplify_volume", json.RawMessage(`{"level":`+level+`}`)); err != nil {
			t.Fatal(err)
		}
	}
	// Each node's events of one device come in order: all of the first call's before the second's.
	for name, events := range seen {
		first := 0
		for {
			e := next(t, events, hub.CallDone, macA)
			if e.Tool != "amplify_volume" || e.Err != nil || e.Device.Node != "a" {
				t.Errorf("node %s saw %+v", name, e)
			}
			if string(e.Input) == `{"level":43}` {
				break
			}
			first++
		}
		if first != 1 {
			t.Errorf("node %s saw the first call %d times; want once", name, first)
		}
	}
}

// A node whose hold another node wrote over (it was cut off from NATS past the TTL, and the
// device registered elsewhere) closes its line for the device.
func TestHoldTakenOverClosesLine(t *testing.T) {
	srv := natstest.Start(t)
	a := startNode(t, srv.URL(), "a", nil)
	events, stop := a.h.Subscribe(0)
	defer stop()
	d := hubtest.Connect(t, a.url, &hubtest.Options{Handle: hubtest.Echo})
	d.MustRegister(t, macB)
	e, err := a.c.kv.Get(t.Context(), macB)
	if err != nil {
		t.Fatal(err)
	}
	over, _ := json.Marshal(holding{Node: "elsewhere", Since: time.Now(), Remote: "192.0.2.1:1234", Tools: toolsKey([]byte(hubtest.Tools))})
	if _, err := a.c.kv.Update(t.Context(), macB, over, e.Revision()); err != nil {
		t.Fatal(err)
	}
	closedFor(t, events, d, macB, hub.ErrMoved)
}

// While NATS is down, a node refuses registrations it cannot check (-32603) and keeps its lines;
// once NATS is back, the holds are renewed and the nodes reach each other's devices again.
func TestNATSOutage(t *testing.T) {
	srv, a, b, _ := onA(t, nil, nil)
	srv.Shutdown()
	late := hubtest.Connect(t, a.url, &hubtest.Options{Handle: hubtest.Echo})
	if _, err := late.Register(ctxFor(t), macB, hubtest.Tools); err == nil || !strings.Contains(err.Error(), "-32603") {
		t.Errorf("registering without NATS: %v; want -32603", err)
	}
	if _, err := a.h.Call(ctxFor(t), macA, "amplify_volume", json.RawMessage(`{"level":1}`)); err != nil {
		t.Errorf("a calling its own device without NATS: %v", err)
	}
	srv.Restart(t)
	deadline := time.Now().Add(15 * time.Second)
	for {
		_, err := b.h.Call(ctxFor(t), macA, "amplify_volume", json.RawMessage(`{"level":2}`))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("b cannot reach a's device after NATS came back: %v", err)
		}
		time.Sleep(100 * time.Millisecond) // NATS clients reconnect once a second
	}
	late.MustRegister(t, macB)
	waitDevice(t, b.h, macB, "a")
}
