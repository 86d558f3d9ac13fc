package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/agent/hub"
	"github.com/devicectl/devicectl/agent/hub/hubtest"
	"github.com/devicectl/devicectl/internal/testing/leakcheck"
	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
)

const (
	macA = "AA-BB-CC-DD-EE-01"
	macB = "AA-BB-CC-DD-EE-02"
)

// planFunc is a Planner written inline.
type planFunc func(ctx context.Context, t agent.TurnContext) error

func (f planFunc) Plan(ctx context.Context, t agent.TurnContext) error { return f(ctx, t) }

func ctxFor(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// setup serves a hub on loopback and returns an agent over it with the planner.
func setup(t testing.TB, p agent.Planner, o *agent.Options) (*agent.Agent, *hub.Hub, string) {
	t.Helper()
	h := hub.New(nil)
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	var opts agent.Options
	if o != nil {
		opts = *o
	}
	opts.Hub, opts.Planner = h, p
	a, err := agent.New(&opts)
	if err != nil {
		t.Fatal(err)
	}
	return a, h, "ws" + strings.TrimPrefix(srv.URL, "http")
}

func device(t testing.TB, url, mac string, handle hubtest.Handler) *hubtest.Device {
	t.Helper()
	d, err := hubtest.Dial(ctxFor(t), url, &hubtest.Options{Handle: handle})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if _, err := d.Register(ctxFor(t), mac, hubtest.Tools); err != nil {
		t.Fatal(err)
	}
	return d
}

// collect runs a turn and returns its events, checking that exactly one terminal event ends it.
func collect(t *testing.T, a *agent.Agent, ctx context.Context, r agent.Request) []agent.Event {
	t.Helper()
	var evs []agent.Event
	for e := range a.Turn(ctx, r) {
		evs = append(evs, e)
	}
	checkTerminal(t, evs)
	return evs
}

func checkTerminal(t *testing.T, evs []agent.Event) {
	t.Helper()
	if len(evs) == 0 {
		t.Fatal("no events")
	}
	for i, e := range evs {
		terminal := e.Kind == agent.EventFinal || e.Kind == agent.EventError
		if terminal != (i == len(evs)-1) {
			t.Fatalf("event %d of %d is %v: %s", i, len(evs), e.Kind, kinds(evs))
		}
	}
}

func kinds(evs []agent.Event) string {
	var s []string
	for _, e := range evs {
		s = append(s, e.Kind.String())
	}
	return strings.Join(s, ",")
}

func last(evs []agent.Event) agent.Event { return evs[len(evs)-1] }

// messages reads n AI messages from the device.
func messages(t *testing.T, d *hubtest.Device, n int) []protocol.AIMessage {
	t.Helper()
	var out []protocol.AIMessage
	for range n {
		select {
		case m := <-d.Messages():
			out = append(out, m)
		case <-time.After(10 * time.Second):
			t.Fatalf("got %d messages %+v, want %d", len(out), out, n)
		}
	}
	return out
}

func TestQueryWaitsAndReplyStreams(t *testing.T) {
	leakcheck.Check(t)
	a, _, url := setup(t, planFunc(func(ctx context.Context, tc agent.TurnContext) error {
		res, err := tc.Call(ctx, "get_status", json.RawMessage(`{}`))
		if err != nil {
			return err
		}
		tc.Thought("reading the state")
		tc.Chunk("state: ")
		tc.Chunk(string(res))
		return nil
	}), nil)
	d := device(t, url, macA, func(context.Context, string, json.RawMessage) (json.RawMessage, *jsonrpc2.Error) {
		return json.RawMessage(`{"volume":30}`), nil
	})
	evs := collect(t, a, ctxFor(t), agent.Request{Text: "status?"})
	if got, want := kinds(evs), "started,tool_call,tool_result,thought,chunk,chunk,final"; got != want {
		t.Fatalf("events %s, want %s", got, want)
	}
	if string(evs[2].Result) != `{"volume":30}` || evs[2].Err != nil {
		t.Fatalf("tool result %s %v", evs[2].Result, evs[2].Err)
	}
	if f := last(evs); f.Text != `state: {"volume":30}` {
		t.Fatalf("final %q", f.Text)
	}
	got := messages(t, d, 4)
	want := []protocol.AIMessage{{Type: "thought", Content: "reading the state"}, {Type: "chunk", Content: "state: "}, {Type: "chunk", Content: `{"volume":30}`}, {Type: "final", Content: `state: {"volume":30}`}}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("device got %+v, want %+v", got, want)
		}
	}
}

func TestControlAnsweredAtOnceAndDeviceErrorReported(t *testing.T) {
	leakcheck.Check(t)
	planned := make(chan json.RawMessage, 1)
	a, _, url := setup(t, planFunc(func(ctx context.Context, tc agent.TurnContext) error {
		res, err := tc.Call(ctx, "amplify_volume", json.RawMessage(`{"level":80}`))
		if err != nil {
			return err
		}
		planned <- res
		tc.Chunk("done")
		return nil
	}), nil)
	release := make(chan struct{})
	d := device(t, url, macA, func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, *jsonrpc2.Error) {
		select { // the device answers only once the reply has reached it
		case <-release:
		case <-ctx.Done():
		}
		data := json.RawMessage(`{"details":"amplifier fault"}`)
		return nil, &jsonrpc2.Error{Code: -32000, Message: "执行失败", Data: &data}
	})
	// The device holds the call until it has the whole reply: had the agent waited for the
	// device's answer before the final, this would time out.
	var beforeAnswer []protocol.AIMessage
	watcher := make(chan struct{})
	go func() {
		defer close(watcher)
		defer close(release)
		timeout := time.After(10 * time.Second)
		for len(beforeAnswer) < 2 {
			select {
			case m := <-d.Messages():
				beforeAnswer = append(beforeAnswer, m)
			case <-timeout:
				return
			}
		}
	}()
	var evs []agent.Event
	for e := range a.Turn(ctxFor(t), agent.Request{Text: "louder"}) {
		evs = append(evs, e)
	}
	<-watcher
	if res := <-planned; string(res) != `{"status":"success"}` {
		t.Errorf("planner got %s, want the fake success", res)
	}
	if len(beforeAnswer) != 2 || beforeAnswer[0] != (protocol.AIMessage{Type: "chunk", Content: "done"}) || beforeAnswer[1] != (protocol.AIMessage{Type: "final", Content: "done"}) {
		t.Errorf("device got %+v before it answered, want the chunk and the final", beforeAnswer)
	}
	checkTerminal(t, evs)
	if got, want := kinds(evs), "started,tool_call,chunk,tool_result,final"; got != want {
		t.Fatalf("events %s, want %s", got, want)
	}
	var te *agent.ToolError
	if !errors.As(evs[3].Err, &te) || te.Code != -32000 || te.Message != "执行失败" || te.Details != "amplifier fault" {
		t.Fatalf("late device error %v, want the device's -32000 with details", evs[3].Err)
	}
}

func TestWaitForControl(t *testing.T) {
	leakcheck.Check(t)
	var got json.RawMessage
	a, _, url := setup(t, planFunc(func(ctx context.Context, tc agent.TurnContext) error {
		res, err := tc.Call(ctx, "amplify_volume", json.RawMessage(`{"level":80}`))
		got = res
		return err
	}), &agent.Options{WaitForControl: true})
	device(t, url, macA, func(context.Context, string, json.RawMessage) (json.RawMessage, *jsonrpc2.Error) {
		return json.RawMessage(`{"status":"success","message":"音量已成功设置为 80"}`), nil
	})
	evs := collect(t, a, ctxFor(t), agent.Request{})
	if last(evs).Kind != agent.EventFinal || string(got) != `{"status":"success","message":"音量已成功设置为 80"}` {
		t.Fatalf("planner got %s, events %s", got, kinds(evs))
	}
}

func TestInputValidatedBeforeAnyCall(t *testing.T) {
	leakcheck.Check(t)
	local := tools.NewRegistry()
	calc, err := tools.Func(tools.Declaration{Name: "add", Description: "Add two numbers.", MainType: tools.Local, SubType: tools.Query},
		func(_ context.Context, in struct {
			A int `json:"a"`
			B int `json:"b"`
		}) (int, error) {
			return in.A + in.B, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if err := local.Add(calc); err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		res json.RawMessage
		err error
	}
	var results []outcome
	a, _, url := setup(t, planFunc(func(ctx context.Context, tc agent.TurnContext) error {
		for _, c := range []struct{ tool, input string }{
			{"amplify_volume", `{"level":150}`},
			{"set_expression", `{"expression":"happy"}`},
			{"no_such_tool", `{}`},
			{"add", `{"a":"five"}`},
			{"add", `{"a":5,"b":10}`},
		} {
			res, err := tc.Call(ctx, c.tool, json.RawMessage(c.input))
			results = append(results, outcome{res, err})
		}
		return nil
	}), &agent.Options{Local: local})
	d := device(t, url, macA, nil)
	evs := collect(t, a, ctxFor(t), agent.Request{})
	if last(evs).Kind != agent.EventFinal {
		t.Fatalf("events %s: %v", kinds(evs), last(evs).Err)
	}
	for i, want := range []string{"tool_input.level: 150 is greater than the maximum 100", `"happy" is not one of`, `unknown tool "no_such_tool"`, "tool_input.a"} {
		var te *agent.ToolError
		if !errors.As(results[i].err, &te) || te.Code != protocol.CodeInvalidParams || !strings.Contains(te.Details, want) {
			t.Errorf("call %d: %v, want -32602 with %q", i, results[i].err, want)
		}
	}
	if r := results[4]; r.err != nil || string(r.res) != "15" {
		t.Errorf("local add: %s %v", r.res, r.err)
	}
	if d.Calls() != 0 {
		t.Fatalf("the device got %d calls for invalid input", d.Calls())
	}
	names := []string{}
	for _, decl := range a.Tools("") {
		names = append(names, decl.Name)
	}
	if strings.Join(names, ",") != "amplify_volume,set_expression,get_status,add" {
		t.Fatalf("Tools = %v", names)
	}
}

func TestDeviceDropsMidCall(t *testing.T) {
	leakcheck.Check(t)
	var callErr atomic.Value
	a, _, url := setup(t, planFunc(func(ctx context.Context, tc agent.TurnContext) error {
		_, err := tc.Call(ctx, "get_status", json.RawMessage(`{}`))
		callErr.Store(err)
		return err
	}), nil)
	var d *hubtest.Device
	d = device(t, url, macA, func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, *jsonrpc2.Error) {
		go d.Close() // the device dies while the call is on it
		<-ctx.Done()
		return nil, nil
	})
	evs := collect(t, a, ctxFor(t), agent.Request{})
	if e := last(evs); e.Kind != agent.EventError || !errors.Is(e.Err, agent.ErrDeviceGone) || evs[1].Kind != agent.EventToolCall {
		t.Fatalf("events %s, last error %v; want the call, then ErrDeviceGone", kinds(evs), e.Err)
	}
	if err, _ := callErr.Load().(error); err != nil && !errors.Is(err, agent.ErrDeviceGone) && !errors.Is(err, context.Canceled) {
		t.Fatalf("the planner's call failed with %v", err)
	}
}

func TestDeviceDropsMidTurn(t *testing.T) {
	leakcheck.Check(t)
	thinking := make(chan struct{})
	a, _, url := setup(t, planFunc(func(ctx context.Context, tc agent.TurnContext) error {
		tc.Chunk("let me think")
		close(thinking)
		<-ctx.Done() // a slow model; the device leaves meanwhile
		return ctx.Err()
	}), nil)
	d := device(t, url, macA, nil)
	var evs []agent.Event
	for e := range a.Turn(ctxFor(t), agent.Request{}) {
		evs = append(evs, e)
		if e.Kind == agent.EventChunk {
			<-thinking
			d.Close()
		}
	}
	checkTerminal(t, evs)
	if e := last(evs); e.Kind != agent.EventError || !errors.Is(e.Err, agent.ErrDeviceGone) || kinds(evs) != "started,chunk,error" {
		t.Fatalf("events %s, last %v", kinds(evs), e.Err)
	}
}

func TestTurnDeadline(t *testing.T) {
	leakcheck.Check(t)
	synctest.Test(t, func(t *testing.T) {
		local := tools.NewRegistry()
		tool, _ := tools.Func(tools.Declaration{Name: "noop", Description: "Nothing.", MainType: tools.Local, SubType: tools.Query},
			func(context.Context, struct{}) (bool, error) { return true, nil })
		local.Add(tool)
		var planCtxErr error
		a, err := agent.New(&agent.Options{Local: local, TurnTimeout: 5 * time.Second, Planner: planFunc(func(ctx context.Context, tc agent.TurnContext) error {
			<-ctx.Done() // a model that never answers
			planCtxErr = ctx.Err()
			return ctx.Err()
		})})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		evs := collect(t, a, context.Background(), agent.Request{})
		e := last(evs)
		if e.Kind != agent.EventError || !errors.Is(e.Err, agent.ErrTurnTimeout) || !errors.Is(e.Err, context.DeadlineExceeded) {
			t.Fatalf("last event %v %v, want ErrTurnTimeout", e.Kind, e.Err)
		}
		if d := time.Since(start); d != 5*time.Second {
			t.Fatalf("the turn ended after %v, want the 5s deadline", d)
		}
		if planCtxErr == nil {
			t.Fatal("the planner's context did not end")
		}
	})
}

func TestDeviceChoice(t *testing.T) {
	leakcheck.Check(t)
	a, _, url := setup(t, planFunc(func(ctx context.Context, tc agent.TurnContext) error {
		_, err := tc.Call(ctx, "get_status", json.RawMessage(`{}`))
		tc.Chunk(tc.Request().MAC)
		return err
	}), nil)

	// None registered.
	if e := last(collect(t, a, ctxFor(t), agent.Request{})); !errors.Is(e.Err, agent.ErrNoDevice) {
		t.Fatalf("no device: %v", e.Err)
	}
	if e := last(collect(t, a, ctxFor(t), agent.Request{MAC: macA})); !errors.Is(e.Err, agent.ErrNoDevice) {
		t.Fatalf("no device, one named: %v", e.Err)
	}

	da := device(t, url, macA, nil)
	// One registered: it is chosen.
	if e := last(collect(t, a, ctxFor(t), agent.Request{})); e.Kind != agent.EventFinal || e.Text != macA {
		t.Fatalf("the only device: %v %q", e.Err, e.Text)
	}
	db := device(t, url, macB, nil)
	// Two and none named.
	e := last(collect(t, a, ctxFor(t), agent.Request{}))
	var dce *agent.DeviceChoiceError
	if !errors.As(e.Err, &dce) || dce.Asked != "" || strings.Join(dce.MACs, ",") != macA+","+macB {
		t.Fatalf("two devices, none named: %v", e.Err)
	}
	// Two, one named (spelled in lower case with colons).
	if e := last(collect(t, a, ctxFor(t), agent.Request{MAC: "aa:bb:cc:dd:ee:02"})); e.Kind != agent.EventFinal || e.Text != macB {
		t.Fatalf("named device: %v %q", e.Err, e.Text)
	}
	if da.Calls() != 1 || db.Calls() != 1 {
		t.Fatalf("calls: A %d, B %d; want 1 each", da.Calls(), db.Calls())
	}
	// A MAC that is not registered.
	e = last(collect(t, a, ctxFor(t), agent.Request{MAC: "AA-BB-CC-DD-EE-03"}))
	if !errors.As(e.Err, &dce) || dce.Asked != "AA-BB-CC-DD-EE-03" || len(dce.MACs) != 2 {
		t.Fatalf("unknown MAC: %v", e.Err)
	}
}

func TestLocalOnlyTurnWithoutDevice(t *testing.T) {
	leakcheck.Check(t)
	local := tools.NewRegistry()
	tool, _ := tools.Func(tools.Declaration{Name: "echo", Description: "Echo.", MainType: tools.Local, SubType: tools.Query},
		func(_ context.Context, in struct {
			S string `json:"s"`
		}) (string, error) {
			return in.S, nil
		})
	local.Add(tool)
	a, _, _ := setup(t, planFunc(func(ctx context.Context, tc agent.TurnContext) error {
		res, err := tc.Call(ctx, "echo", json.RawMessage(`{"s":"hi"}`))
		if err != nil {
			return err
		}
		tc.Chunk(string(res))
		if _, err := tc.Call(ctx, "amplify_volume", json.RawMessage(`{"level":1}`)); !errors.Is(err, agent.ErrNoDevice) {
			t.Errorf("device tool without a device: %v", err)
		}
		return nil
	}), &agent.Options{Local: local})
	if e := last(collect(t, a, ctxFor(t), agent.Request{})); e.Kind != agent.EventFinal || e.Text != `"hi"` {
		t.Fatalf("local-only turn: %v %q", e.Err, e.Text)
	}
}

func TestHistory(t *testing.T) {
	leakcheck.Check(t)
	var seen [][]agent.Exchange
	a, _, url := setup(t, planFunc(func(ctx context.Context, tc agent.TurnContext) error {
		seen = append(seen, tc.History())
		tc.Chunk("re: " + tc.Request().Text)
		return nil
	}), &agent.Options{HistoryLen: 2})
	device(t, url, macA, nil)
	for _, text := range []string{"one", "two", "three", "four"} {
		collect(t, a, ctxFor(t), agent.Request{Text: text, SessionID: "s"})
	}
	collect(t, a, ctxFor(t), agent.Request{Text: "other", SessionID: "s2"})
	if len(seen[0]) != 0 || len(seen[1]) != 1 || seen[1][0] != (agent.Exchange{User: "one", Reply: "re: one"}) {
		t.Fatalf("history %+v", seen)
	}
	if h := seen[3]; len(h) != 2 || h[0].User != "two" || h[1].User != "three" {
		t.Fatalf("bounded history %+v", h)
	}
	if len(seen[4]) != 0 {
		t.Fatalf("another session saw %+v", seen[4])
	}
}

func TestStopIteratingCancelsTurn(t *testing.T) {
	leakcheck.Check(t)
	cancelled := make(chan struct{})
	a, _, url := setup(t, planFunc(func(ctx context.Context, tc agent.TurnContext) error {
		tc.Chunk("a")
		tc.Chunk("b")
		<-ctx.Done()
		close(cancelled)
		return ctx.Err()
	}), nil)
	device(t, url, macA, nil)
	for e := range a.Turn(ctxFor(t), agent.Request{}) {
		if e.Kind == agent.EventChunk {
			break
		}
	}
	select {
	case <-cancelled:
	default:
		t.Fatal("the planner was still running when the loop ended")
	}
}

func TestPlannerErrorAndPanic(t *testing.T) {
	leakcheck.Check(t)
	boom := errors.New("model unreachable")
	for name, p := range map[string]planFunc{
		"error": func(context.Context, agent.TurnContext) error { return boom },
		"panic": func(context.Context, agent.TurnContext) error { panic("bug") },
	} {
		a, _, url := setup(t, p, nil)
		device(t, url, macA, nil)
		e := last(collect(t, a, ctxFor(t), agent.Request{}))
		if e.Kind != agent.EventError || (name == "error" && !errors.Is(e.Err, boom)) {
			t.Fatalf("%s: %v", name, e.Err)
		}
	}
}

func TestNewNeedsPlanner(t *testing.T) {
	if _, err := agent.New(&agent.Options{}); err == nil {
		t.Fatal("New without a planner succeeded")
	}
	if _, err := agent.New(nil); err == nil {
		t.Fatal("New(nil) succeeded")
	}
}

func TestControlNeverAnsweredEndsAtDeadlineWithFinal(t *testing.T) {
	leakcheck.Check(t)
	a, _, url := setup(t, planFunc(func(ctx context.Context, tc agent.TurnContext) error {
		if _, err := tc.Call(ctx, "set_expression", json.RawMessage(`{"expression":"smile"}`)); err != nil {
			return err
		}
		tc.Chunk("smiling")
		return nil
	}), &agent.Options{TurnTimeout: 300 * time.Millisecond})
	device(t, url, macA, func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, *jsonrpc2.Error) {
		<-ctx.Done() // a device that never answers the control call
		return nil, nil
	})
	evs := collect(t, a, ctxFor(t), agent.Request{})
	if got, want := kinds(evs), "started,tool_call,chunk,tool_result,final"; got != want {
		t.Fatalf("events %s, want %s", got, want)
	}
	if err := evs[3].Err; !errors.Is(err, agent.ErrTurnTimeout) {
		t.Fatalf("the unanswered control call reported %v, want ErrTurnTimeout", err)
	}
	if last(evs).Text != "smiling" {
		t.Fatalf("final %q", last(evs).Text)
	}
}

// A device's turn starts with what Preface has to say of it (the reminders it missed), and a
// local tool can tell which device its turn is on.
func TestPrefaceAndRequestOf(t *testing.T) {
	leakcheck.Check(t)
	local := tools.NewRegistry()
	tool, _ := tools.Func(tools.Declaration{Name: "which", Description: "Which device.", MainType: tools.Local, SubType: tools.Query},
		func(ctx context.Context, _ struct{}) (string, error) {
			r, ok := agent.RequestOf(ctx)
			if !ok {
				return "", errors.New("no request")
			}
			return r.MAC, nil
		})
	local.Add(tool)
	var asked []string
	a, _, url := setup(t, planFunc(func(ctx context.Context, tc agent.TurnContext) error {
		res, err := tc.Call(ctx, "which", json.RawMessage(`{}`))
		if err != nil {
			return err
		}
		tc.Chunk("On " + string(res) + ".")
		return nil
	}), &agent.Options{Local: local, Preface: func(_ context.Context, mac string) string {
		asked = append(asked, mac)
		if len(asked) > 1 {
			return "" // told once
		}
		return "You missed: stretch (14:32)."
	}})
	device(t, url, "AA-BB-CC-DD-EE-05", nil)
	for _, want := range []string{`You missed: stretch (14:32). On "AA-BB-CC-DD-EE-05".`, `On "AA-BB-CC-DD-EE-05".`} {
		if e := last(collect(t, a, ctxFor(t), agent.Request{MAC: "AA-BB-CC-DD-EE-05"})); e.Kind != agent.EventFinal || e.Text != want {
			t.Errorf("reply %q (%v), want %q", e.Text, e.Err, want)
		}
	}
	if len(asked) != 2 || asked[0] != "AA-BB-CC-DD-EE-05" {
		t.Errorf("Preface asked for %v", asked)
	}
}
