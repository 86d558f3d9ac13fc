package hub_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/devicectl/devicectl/agent/hub"
	"github.com/devicectl/devicectl/agent/hub/hubtest"
	"github.com/devicectl/devicectl/internal/testing/leakcheck"
	"github.com/devicectl/devicectl/transport"
)

const macA = "AA-BB-CC-DD-EE-01"

// start serves a hub on a loopback port; everything is closed when the test ends.
func start(t *testing.T, o *hub.Options) (*hub.Hub, string) {
	t.Helper()
	h := hub.New(o)
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	return h, "ws" + strings.TrimPrefix(srv.URL, "http") + "/any/path"
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// next returns the next event of a kind, skipping others (call events, say).
func next(t *testing.T, events <-chan hub.Event, kind hub.EventKind) hub.Event {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case e, ok := <-events:
			if !ok {
				t.Fatalf("events closed while waiting for %v", kind)
			}
			if e.Kind == kind {
				return e
			}
		case <-timeout:
			t.Fatalf("no %v event", kind)
		}
	}
}

func TestRegistrationAnswered(t *testing.T) {
	leakcheck.Check(t)
	h, url := start(t, nil)
	events, cancel := h.Subscribe(0)
	defer cancel()
	d := hubtest.Connect(t, url, &hubtest.Options{ClientID: "c1"})
	m, err := d.Register(ctxFor(t), "aa:bb:cc:dd:ee:01", hubtest.Tools)
	if err != nil {
		t.Fatal(err)
	}
	var res struct{ Status, Message string }
	if err := json.Unmarshal(m.Result, &res); err != nil || res.Status != "registered" || res.Message == "" {
		t.Fatalf("answer %s (%v), want status registered and a message", m.Result, err)
	}
	if e := next(t, events, hub.Registered); e.Device.MAC != macA || len(e.Device.Tools) != 3 {
		t.Fatalf("registered event %+v", e.Device)
	}
	devs := h.Devices()
	if len(devs) != 1 || devs[0].MAC != macA || devs[0].ClientID != "c1" || devs[0].RemoteAddr == "" || devs[0].Since.IsZero() {
		t.Fatalf("Devices() = %+v", devs)
	}
	if got := []string{devs[0].Tools[0].Name, devs[0].Tools[1].Name, devs[0].Tools[2].Name}; strings.Join(got, ",") != "amplify_volume,set_expression,get_status" {
		t.Fatalf("tools %v", got)
	}
}

func TestBadRegistration(t *testing.T) {
	leakcheck.Check(t)
	_, url := start(t, nil)
	d := hubtest.Connect(t, url, nil)
	tool := func(name, sub, params string) string {
		return `{"name":"` + name + `","description":"d","main_type":"remote","sub_type":"` + sub + `","parameters":` + params + `}`
	}
	obj := `{"type":"object","properties":{}}`
	for _, tc := range []struct {
		name, params, details string
	}{
		{"bad MAC", `{"mac_addr":"not-a-mac","tools":[]}`, `mac_addr "not-a-mac"`},
		{"MAC with a bad digit", `{"mac_addr":"AA-BB-CC-DD-EE-GG","tools":[]}`, "six hex pairs"},
		{"no tools", `{"mac_addr":"` + macA + `"}`, "tools is required"},
		{"tools not an array", `{"mac_addr":"` + macA + `","tools":{}}`, "not an array"},
		{"params an array", `[1]`, "params must be an object"},
		{"bad tool name", `{"mac_addr":"` + macA + `","tools":[` + tool("bad name", "query", obj) + `]}`, `tools[0]: tool "bad name": name`},
		{"bad sub_type", `{"mac_addr":"` + macA + `","tools":[` + tool("t", "sometimes", obj) + `]}`, `sub_type "sometimes"`},
		{"schema not an object", `{"mac_addr":"` + macA + `","tools":[` + tool("t", "query", `{"type":"string"}`) + `]}`, `tools[0]`},
		{"schema that does not resolve", `{"mac_addr":"` + macA + `","tools":[` + tool("t", "query", `{"type":"object","properties":{"x":{"$ref":"#/nowhere"}}}`) + `]}`, `tools[0]`},
		{"duplicate", `{"mac_addr":"` + macA + `","tools":[` + tool("t", "query", obj) + `,` + tool("t", "query", obj) + `]}`, `tools[1]: tool "t": already registered`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := d.RegisterRaw(ctxFor(t), json.RawMessage(tc.params))
			if !errors.Is(err, hubtest.ErrRefused) {
				t.Fatalf("err %v, want a refusal", err)
			}
			if m.Error.Code != -32602 || m.Error.Data == nil {
				t.Fatalf("error %+v, want -32602 with data", m.Error)
			}
			var data struct{ Details string }
			if err := json.Unmarshal(*m.Error.Data, &data); err != nil || !strings.Contains(data.Details, tc.details) {
				t.Fatalf("data %s, want details containing %q", *m.Error.Data, tc.details)
			}
		})
	}
	// The line is still up and can register properly.
	d.MustRegister(t, macA)
}

func TestReRegistrationUpdatesTools(t *testing.T) {
	leakcheck.Check(t)
	h, url := start(t, nil)
	events, cancel := h.Subscribe(0)
	defer cancel()
	d := hubtest.Connect(t, url, nil)
	d.MustRegister(t, macA)
	next(t, events, hub.Registered)
	one := `[{"name":"blink","description":"Blink.","main_type":"remote","sub_type":"control","parameters":{"type":"object"}}]`
	m, err := d.Register(ctxFor(t), macA, one)
	if err != nil || !strings.Contains(string(m.Result), "registered") {
		t.Fatalf("re-registration: %v %s", err, m.Result)
	}
	e := next(t, events, hub.ToolsChanged)
	if len(e.Device.Tools) != 1 || e.Device.Tools[0].Name != "blink" {
		t.Fatalf("tools changed to %+v", e.Device.Tools)
	}
	if dv, _ := h.Device(macA); len(dv.Tools) != 1 {
		t.Fatalf("Device tools %+v", dv.Tools)
	}
	if _, err := h.Validate(macA, "amplify_volume", json.RawMessage(`{"level":1}`)); err == nil {
		t.Fatal("the old tool still validates")
	}
	// Another MAC on the same line is refused.
	if _, err := d.Register(ctxFor(t), "AA-BB-CC-DD-EE-02", one); !errors.Is(err, hubtest.ErrRefused) || !strings.Contains(err.Error(), macA) {
		t.Fatalf("second MAC on one line: %v", err)
	}
}

func TestSecondRegistrationRefused(t *testing.T) {
	for _, tc := range []struct{ name, first, second string }{
		{"other client id", "dev-1", "intruder"},
		{"no client id", "dev-1", ""},
		{"neither has a client id", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leakcheck.Check(t)
			h, url := start(t, nil)
			events, cancel := h.Subscribe(0)
			defer cancel()
			live := hubtest.Connect(t, url, &hubtest.Options{ClientID: tc.first})
			live.MustRegister(t, macA)
			intruder := hubtest.Connect(t, url, &hubtest.Options{ClientID: tc.second, Handle: func(context.Context, string, json.RawMessage) (json.RawMessage, *jsonrpc2.Error) {
				return json.RawMessage(`"intruder answered"`), nil
			}})
			_, err := intruder.Register(ctxFor(t), macA, hubtest.Tools)
			if !errors.Is(err, hubtest.ErrRefused) || !strings.Contains(err.Error(), macA) || !strings.Contains(err.Error(), "already registered") {
				t.Fatalf("second registration: %v, want a refusal naming the MAC", err)
			}
			if e := next(t, events, hub.Refused); e.Device.MAC != macA || e.Reason == nil {
				t.Fatalf("refused event %+v", e)
			}
			res, err := h.Call(ctxFor(t), macA, "get_status", json.RawMessage(`{}`))
			if err != nil || !strings.Contains(string(res), "success") {
				t.Fatalf("call after the refusal: %s, %v; want the live device's answer", res, err)
			}
			if intruder.Calls() != 0 {
				t.Fatal("the intruder was called")
			}
		})
	}
}

func TestSecondRegistrationReplaces(t *testing.T) {
	leakcheck.Check(t)
	h, url := start(t, nil)
	events, cancel := h.Subscribe(0)
	defer cancel()
	release := make(chan struct{})
	received := make(chan struct{}, 1)
	old := hubtest.Connect(t, url, &hubtest.Options{ClientID: "dev-1", Handle: func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, *jsonrpc2.Error) {
		select { // the call has reached the device
		case received <- struct{}{}:
		default:
		}
		select { // a line that died unnoticed: the call is never answered
		case <-release:
		case <-ctx.Done():
		}
		return nil, &jsonrpc2.Error{Code: -32000, Message: "too late"}
	}})
	defer close(release)
	old.MustRegister(t, macA)
	next(t, events, hub.Registered)

	pending := make(chan error, 1)
	go func() {
		_, err := h.Call(context.Background(), macA, "get_status", json.RawMessage(`{}`))
		pending <- err
	}()
	waitReceived(t, received) // the call is in flight on the line

	fresh := hubtest.Connect(t, url, &hubtest.Options{ClientID: "dev-1"})
	fresh.MustRegister(t, macA)
	if e := next(t, events, hub.Disconnected); !errors.Is(e.Reason, hub.ErrReplaced) {
		t.Fatalf("disconnected because %v, want ErrReplaced", e.Reason)
	}
	next(t, events, hub.Registered)
	if err := <-pending; !errors.Is(err, hub.ErrGone) || !errors.Is(err, hub.ErrReplaced) {
		t.Fatalf("call on the replaced line: %v, want ErrGone and ErrReplaced", err)
	}
	select {
	case <-old.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the old line was not closed")
	}
	if _, err := h.Call(ctxFor(t), macA, "get_status", json.RawMessage(`{}`)); err != nil || fresh.Calls() != 1 {
		t.Fatalf("call after the replacement: %v, fresh calls %d", err, fresh.Calls())
	}
	if devs := h.Devices(); len(devs) != 1 {
		t.Fatalf("devices %+v", devs)
	}
}

func TestDeviceToken(t *testing.T) {
	leakcheck.Check(t)
	_, url := start(t, &hub.Options{Tokens: []string{"s3cret", "other"}})
	for _, tok := range []string{"", "wrong", "s3cre", "s3cret2"} {
		_, err := hubtest.Dial(ctxFor(t), url, &hubtest.Options{Token: tok})
		var he *transport.HandshakeError
		if !errors.As(err, &he) || he.StatusCode != 401 {
			t.Fatalf("token %q: %v, want a 401", tok, err)
		}
	}
	for i, tok := range []string{"s3cret", "other"} {
		hubtest.Connect(t, url, &hubtest.Options{Token: tok}).MustRegister(t, "AA-BB-CC-DD-EE-0"+string(rune('1'+i)))
	}
}

func TestCall(t *testing.T) {
	leakcheck.Check(t)
	h, url := start(t, nil)
	events, cancel := h.Subscribe(0)
	defer cancel()
	d := hubtest.Connect(t, url, &hubtest.Options{Handle: func(_ context.Context, tool string, input json.RawMessage) (json.RawMessage, *jsonrpc2.Error) {
		if tool == "amplify_volume" {
			data := json.RawMessage(`{"details":"level 99 refused by the amplifier"}`)
			return nil, &jsonrpc2.Error{Code: -32000, Message: "执行失败", Data: &data}
		}
		return json.RawMessage(`{"volume":30,"a":1}`), nil // key order kept: not re-encoded
	}})
	d.MustRegister(t, macA)

	res, err := h.Call(ctxFor(t), "aa-bb-cc-dd-ee-01", "get_status", json.RawMessage(`{}`))
	if err != nil || string(res) != `{"volume":30,"a":1}` {
		t.Fatalf("result %s, %v; want the bytes as received", res, err)
	}
	if e := next(t, events, hub.CallDone); e.Tool != "get_status" || e.Err != nil || e.Duration <= 0 ||
		string(e.Input) != `{}` || string(e.Result) != `{"volume":30,"a":1}` {
		t.Fatalf("call event %+v", e)
	}
	resp, err := h.CallRaw(ctxFor(t), macA, "get_status", json.RawMessage(`{}`))
	if err != nil || !strings.HasPrefix(string(resp.Raw), `{"jsonrpc":"2.0","id":"tc-`) || !strings.HasSuffix(string(resp.Raw), `,"result":{"volume":30,"a":1}}`) {
		t.Fatalf("raw %s, %v", resp.Raw, err)
	}

	next(t, events, hub.CallDone)
	_, err = h.Call(ctxFor(t), macA, "amplify_volume", json.RawMessage(`{"level":99}`))
	var ce *hub.CallError
	if !errors.As(err, &ce) || ce.Code != -32000 || ce.Message != "执行失败" || ce.Details != "level 99 refused by the amplifier" || ce.MAC != macA {
		t.Fatalf("device error: %#v", err)
	}
	if e := next(t, events, hub.CallDone); e.Tool != "amplify_volume" || string(e.Input) != `{"level":99}` || e.Result != nil || !errors.As(e.Err, &ce) {
		t.Fatalf("error call event %+v", e)
	}
	resp, err = h.CallRaw(ctxFor(t), macA, "amplify_volume", json.RawMessage(`{"level":99}`))
	if err != nil || resp.Err == nil || !strings.Contains(string(resp.Raw), `"error":{"code":-32000,"message":"执行失败","data":{"details":"level 99 refused by the amplifier"}}`) {
		t.Fatalf("raw error %s, %v", resp.Raw, err)
	}

	if _, err := h.Call(ctxFor(t), "AA-BB-CC-DD-EE-99", "get_status", nil); !errors.Is(err, hub.ErrNotRegistered) {
		t.Fatalf("unknown MAC: %v", err)
	}
	if err := h.Send("AA-BB-CC-DD-EE-99", "chunk", "x"); !errors.Is(err, hub.ErrNotRegistered) {
		t.Fatalf("send to unknown MAC: %v", err)
	}
}

func TestValidate(t *testing.T) {
	leakcheck.Check(t)
	h, url := start(t, nil)
	hubtest.Connect(t, url, nil).MustRegister(t, macA)
	if d, err := h.Validate(macA, "amplify_volume", json.RawMessage(`{"level":80}`)); err != nil || d.SubType != "control" {
		t.Fatalf("valid input: %v %+v", err, d)
	}
	for input, want := range map[string]string{
		`{"level":150}`: "tool_input.level: 150 is greater than the maximum 100",
		`{}`:            `missing required property "level"`,
		``:              "tool_input is required",
	} {
		_, err := h.Validate(macA, "amplify_volume", json.RawMessage(input))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("input %q: %v, want %q", input, err, want)
		}
	}
	if _, err := h.Validate(macA, "nope", json.RawMessage(`{}`)); err == nil || !strings.Contains(err.Error(), `unknown tool "nope"`) {
		t.Errorf("unknown tool: %v", err)
	}
}

func TestDeviceDropsMidCall(t *testing.T) {
	leakcheck.Check(t)
	h, url := start(t, nil)
	events, cancel := h.Subscribe(0)
	defer cancel()
	received := make(chan struct{}, 1)
	d := hubtest.Connect(t, url, &hubtest.Options{Handle: func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, *jsonrpc2.Error) {
		select { // the call has reached the device
		case received <- struct{}{}:
		default:
		}
		<-ctx.Done() // never answers
		return nil, nil
	}})
	d.MustRegister(t, macA)
	done, ok := h.Done(macA)
	if !ok {
		t.Fatal("no Done for a registered device")
	}
	errc := make(chan error, 1)
	go func() {
		_, err := h.Call(context.Background(), macA, "get_status", json.RawMessage(`{}`))
		errc <- err
	}()
	waitReceived(t, received)
	d.Close()
	if err := <-errc; !errors.Is(err, hub.ErrGone) {
		t.Fatalf("call to a dropped device: %v, want ErrGone", err)
	}
	<-done
	if e := next(t, events, hub.Disconnected); e.Device.MAC != macA || e.Reason == nil {
		t.Fatalf("disconnected %+v", e)
	}
	if len(h.Devices()) != 0 {
		t.Fatal("the dropped device is still listed")
	}
}

func TestCallContext(t *testing.T) {
	leakcheck.Check(t)
	h, url := start(t, nil)
	release := make(chan struct{})
	received := make(chan struct{}, 1)
	d := hubtest.Connect(t, url, &hubtest.Options{Handle: func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, *jsonrpc2.Error) {
		select { // the call has reached the device
		case received <- struct{}{}:
		default:
		}
		<-release
		return json.RawMessage(`"late"`), nil
	}})
	d.MustRegister(t, macA)
	ctx, cancelCall := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := h.Call(ctx, macA, "get_status", json.RawMessage(`{}`))
		errc <- err
	}()
	waitReceived(t, received)
	cancelCall()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	close(release) // the late answer is dropped; the line goes on
	if _, err := h.Call(ctxFor(t), macA, "amplify_volume", json.RawMessage(`{"level":1}`)); err != nil {
		t.Fatalf("call after a late answer: %v", err)
	}
}

func TestSendInOrder(t *testing.T) {
	leakcheck.Check(t)
	h, url := start(t, nil)
	d := hubtest.Connect(t, url, nil)
	d.MustRegister(t, macA)
	const n = 200
	for i := range n {
		if err := h.Send(macA, "chunk", string(rune('a'+i%26))); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Send(macA, "final", "end"); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		m := <-d.Messages()
		if m.Type != "chunk" || m.Content != string(rune('a'+i%26)) {
			t.Fatalf("message %d: %+v", i, m)
		}
	}
	if m := <-d.Messages(); m.Type != "final" || m.Content != "end" {
		t.Fatalf("last message %+v", m)
	}
}

func TestCloseEndsEverything(t *testing.T) {
	leakcheck.Check(t)
	h := hub.New(nil)
	srv := httptest.NewServer(h)
	defer srv.Close()
	url := "ws" + strings.TrimPrefix(srv.URL, "http")
	events, cancel := h.Subscribe(0)
	defer cancel()
	received := make(chan struct{}, 1)
	d := hubtest.Connect(t, url, &hubtest.Options{Handle: func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, *jsonrpc2.Error) {
		select { // the call has reached the device
		case received <- struct{}{}:
		default:
		}
		<-ctx.Done()
		return nil, nil
	}})
	d.MustRegister(t, macA)
	errc := make(chan error, 1)
	go func() {
		_, err := h.Call(context.Background(), macA, "get_status", json.RawMessage(`{}`))
		errc <- err
	}()
	waitReceived(t, received)
	h.Close()
	if err := <-errc; !errors.Is(err, hub.ErrGone) {
		t.Fatalf("call at Close: %v", err)
	}
	for range events { // drained, then closed by Close
	}
	if _, err := hubtest.Dial(ctxFor(t), url, nil); err == nil {
		t.Fatal("a closed hub accepted a line")
	}
}

func TestLineThatNeverRegistersIsClosed(t *testing.T) {
	leakcheck.Check(t)
	_, url := start(t, &hub.Options{RegisterTimeout: 50 * time.Millisecond})
	idle := hubtest.Connect(t, url, nil)
	select {
	case <-idle.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("an unregistered line stayed open")
	}
	// A line that registers in time stays.
	d := hubtest.Connect(t, url, nil)
	d.MustRegister(t, macA)
	select {
	case <-d.Done():
		t.Fatal("a registered line was closed")
	case <-time.After(200 * time.Millisecond):
	}
}

// waitReceived waits for a device's Handle to say a call has reached it.
func waitReceived(t *testing.T, received <-chan struct{}) {
	t.Helper()
	select {
	case <-received:
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not reach the device within 10s")
	}
}
