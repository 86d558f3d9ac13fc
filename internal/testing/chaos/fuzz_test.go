package chaos_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/internal/testing/chaos"
	"github.com/devicectl/devicectl/protocol"
)

// FuzzDispatch sends any frame (text or binary) from the server to a registered agent over a real
// loopback line and checks that:
//   - the agent neither panics (a panic kills the fuzz worker; a recovered one is logged at error
//     level, which fails the input too) nor drops the line;
//   - it answers the frame at most once, and exactly once when the frame is plainly a request
//     with an id (then with that id), not at all when it is plainly a notification or a response,
//     and -32700 with id null when it is not JSON;
//   - every frame it sends is a JSON-RPC response;
//   - it still serves a normal execute afterwards.
//
// An answer may come from a call the frame started, after the agent has answered later frames;
// so each input ends by waiting until no such call is left (see quiesce) before it counts.
//
// Each input goes to two agents: one whose tools may block and one whose tools are instant
// (parts), so both ways a call can run see it.
func FuzzDispatch(f *testing.F) {
	var hs []*fuzzHarness
	for _, p := range parts {
		hs = append(hs, newFuzzHarness(f, p.instant))
	}
	f.Add([]byte(`{"jsonrpc":"2.0","id":"a","method":"mcp/tool/execute","params":{"tool_name":"echo","tool_input":{"n":1}}}`), false)
	f.Add([]byte(`{"jsonrpc":"2.0","method":"mcp/ai/message","params":{"type":"chunk","content":"hi"}}`), false)
	f.Add([]byte(`{"jsonrpc":"2.0","id":7,"result":{}}`), false)
	f.Add([]byte(`not json`), false)
	f.Add([]byte(`{"jsonrpc":"2.0","id":"b","method":"x"}`), true)
	f.Fuzz(func(t *testing.T, frame []byte, binary bool) {
		for _, h := range hs {
			h.check(t, frame, binary)
		}
	})
}

// fuzzHarness is one agent and the server's end of its line, shared by every input of a run.
type fuzzHarness struct {
	c       *websocket.Conn
	agent   *device.Agent
	invoked atomic.Int64 // tool calls started
	report  chan struct{}
	seq     int

	mu       sync.Mutex
	reported int64    // tool calls answered (OnCall)
	errs     []string // error-level log records
}

func newFuzzHarness(f *testing.F, instant bool) *fuzzHarness {
	h := &fuzzHarness{report: make(chan struct{}, 1)}
	conns := make(chan *websocket.Conn, 1)
	hold := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		c.SetReadLimit(4 << 20)
		select {
		case conns <- c:
			<-hold
		default:
			c.CloseNow()
		}
	}))
	reg := chaosRegistry(f, nil, &h.invoked, instant)
	led := chaos.NewLedger(bounds()) // only for Render: the oracle here is the fuzz check's
	opts := agentOptions("ws"+strings.TrimPrefix(srv.URL, "http")+"/", reg, led)
	// One call at a time: quiesce's local call can only start once the frame's call, if any, has
	// finished running.
	opts.MaxInFlight = 1
	opts.Render = func(protocol.AIMessage) {}
	opts.Dial.PingInterval = -1 // the fuzz check reads the line itself: nobody answers pings in between
	opts.OnCall = func(device.CallReport) {
		h.mu.Lock()
		h.reported++
		h.mu.Unlock()
		select {
		case h.report <- struct{}{}:
		default:
		}
	}
	opts.Logger = slog.New(errorRecorder{h})
	a, err := device.New(opts)
	if err != nil {
		f.Fatal(err)
	}
	h.agent = a
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	f.Cleanup(func() {
		// Drop the line first: a stop on a live line would wait for a close handshake that the
		// handler, which never reads, cannot answer.
		if h.c != nil {
			h.c.CloseNow()
		}
		cancel()
		<-done
		close(hold)
		srv.Close()
	})
	select {
	case h.c = <-conns:
	case <-time.After(10 * time.Second):
		f.Fatal("the agent did not connect")
	}
	var m struct{ ID json.RawMessage }
	_, b, err := h.c.Read(context.Background())
	if err != nil || json.Unmarshal(b, &m) != nil {
		f.Fatalf("registration: %s %v", b, err)
	}
	if err := h.c.Write(context.Background(), websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"status":"registered"}}`)); err != nil {
		f.Fatal(err)
	}
	return h
}

// errorRecorder is a slog handler that keeps error-level records: the agent logs a recovered
// panic, and a frame its transport let through but could not decode, at that level.
type errorRecorder struct{ h *fuzzHarness }

func (e errorRecorder) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelError }
func (e errorRecorder) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	e.h.mu.Lock()
	e.h.errs = append(e.h.errs, b.String())
	e.h.mu.Unlock()
	return nil
}
func (e errorRecorder) WithAttrs([]slog.Attr) slog.Handler { return e }
func (e errorRecorder) WithGroup(string) slog.Handler      { return e }

type fuzzResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code int64 `json:"code"`
	} `json:"error"`
}

func (h *fuzzHarness) check(t *testing.T, frame []byte, binary bool) {
	h.seq++
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	typ := websocket.MessageText
	if binary {
		typ = websocket.MessageBinary
	}
	if err := h.c.Write(ctx, typ, frame); err != nil {
		t.Fatalf("write: %v", err)
	}
	// Everything the frame causes inline is answered before this probe is.
	got := h.until(ctx, t, fmt.Sprintf("fuzz-sync-%d-a", h.seq), nil)
	h.quiesce(ctx, t)
	// A call the frame started has answered by now; the probe's answer comes after it.
	got = append(got, h.until(ctx, t, fmt.Sprintf("fuzz-sync-%d-b", h.seq), nil)...)

	if len(got) > 1 {
		t.Errorf("one frame, %d answers: %s", len(got), bytes.Join(got, []byte(" | ")))
	}
	switch want := classifyFrame(frame, binary); want.kind {
	case wantNone:
		if len(got) != 0 {
			t.Errorf("%s: want no answer, got %s", want.why, got[0])
		}
	case wantID:
		if len(got) != 1 {
			t.Errorf("%s with id %s: want one answer, got %d", want.why, want.id, len(got))
			break
		}
		var r fuzzResponse
		json.Unmarshal(got[0], &r)
		refused := string(r.ID) == "null" && r.Error != nil && r.Error.Code == protocol.CodeInvalidRequest
		if !chaos.SameID(r.ID, want.id) && !(want.nullOK && refused) {
			t.Errorf("%s with id %s: answered with id %s: %s", want.why, want.id, r.ID, got[0])
		}
	case wantNull:
		if len(got) != 1 {
			t.Errorf("%s: want one answer with id null, got %d", want.why, len(got))
			break
		}
		var r fuzzResponse
		json.Unmarshal(got[0], &r)
		if string(r.ID) != "null" || r.Error == nil || r.Error.Code != want.code {
			t.Errorf("%s: want error %d with id null, got %s", want.why, want.code, got[0])
		}
	}

	// And the agent still serves a call.
	id := fmt.Sprintf("fuzz-after-%d", h.seq)
	if err := h.c.Write(ctx, websocket.MessageText, chaos.ExecuteFrame(json.RawMessage(`"`+id+`"`), chaos.EchoTool, `{"n":1}`)); err != nil {
		t.Fatalf("write: %v", err)
	}
	var after fuzzResponse
	h.until(ctx, t, "", func(b []byte) bool {
		var r fuzzResponse
		if json.Unmarshal(b, &r) == nil && string(r.ID) == `"`+id+`"` {
			after = r
			return true
		}
		return false
	})
	if after.Result == nil {
		t.Errorf("a normal execute after the frame was not served: error %+v", after.Error)
	}

	h.mu.Lock()
	errs := h.errs
	h.errs = nil
	h.mu.Unlock()
	for _, e := range errs {
		t.Errorf("the agent logged an error: %s", e)
	}
}

// until sends the probe named id (unless id is empty) and reads frames until the probe's answer
// (or until done accepts a frame), returning the other frames. Each must be a JSON-RPC response.
func (h *fuzzHarness) until(ctx context.Context, t *testing.T, id string, done func([]byte) bool) [][]byte {
	if id != "" {
		if err := h.c.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":"`+id+`","method":"fuzz/sync"}`)); err != nil {
			t.Fatalf("write: %v", err)
		}
		done = func(b []byte) bool {
			var r fuzzResponse
			return json.Unmarshal(b, &r) == nil && string(r.ID) == `"`+id+`"`
		}
	}
	var others [][]byte
	for {
		typ, b, err := h.c.Read(ctx)
		if err != nil {
			t.Fatalf("the line died: %v", err)
		}
		var r fuzzResponse
		if typ != websocket.MessageText || json.Unmarshal(b, &r) != nil || r.JSONRPC != "2.0" || r.ID == nil || (r.Result == nil) == (r.Error == nil) {
			t.Errorf("the agent sent a %v frame that is not a JSON-RPC response: %q", typ, b)
		}
		if done(b) {
			return others
		}
		others = append(others, b)
	}
}

// quiesce waits until no call the frame may have started is running or answering: a local call
// is admitted only once the single in-flight slot is free, which the frame's call gives up after
// its tool returned; from then on, OnCall says when its answer has been sent.
func (h *fuzzHarness) quiesce(ctx context.Context, t *testing.T) {
	for {
		_, err := h.agent.Call(ctx, chaos.EchoTool, json.RawMessage(`{"n":0}`))
		var ce *device.CallError
		if errors.As(err, &ce) && ce.Code == protocol.CodeBusy {
			// The call holding the slot reports once it has answered. (A report left over from an
			// earlier call only costs another try.)
			select {
			case <-h.report:
				continue
			case <-ctx.Done():
				t.Fatal("a call is still running after 20s")
			}
		}
		if err != nil {
			t.Fatalf("local barrier call: %v", err)
		}
		break
	}
	for {
		h.mu.Lock()
		n := h.reported
		h.mu.Unlock()
		if n >= h.invoked.Load() {
			return
		}
		select {
		case <-h.report:
		case <-ctx.Done():
			t.Fatalf("%d calls started, %d answered after 20s", h.invoked.Load(), n)
		}
	}
}

type wantKind int

const (
	wantAny  wantKind = iota // no claim beyond "at most one"
	wantNone                 // a notification or a response: never answered
	wantID                   // a request with a usable id: answered once, with it
	wantNull                 // answered once, id null, with code
)

type want struct {
	kind   wantKind
	id     json.RawMessage
	nullOK bool // the id may instead be refused: -32600 with id null
	code   int64
	why    string
}

// classifyFrame is the fuzz check's own, deliberately strict reading of JSON-RPC 2.0: it makes a
// claim only for frames whose meaning no reasonable reading disputes, and leaves the rest
// (duplicate or odd members, odd ids) to "at most one answer".
func classifyFrame(frame []byte, binary bool) want {
	if binary {
		return want{kind: wantNull, code: protocol.CodeInvalidRequest, why: "a binary frame"}
	}
	if !json.Valid(frame) {
		return want{kind: wantNull, code: protocol.CodeParseError, why: "not JSON"}
	}
	members, ok := objectMembers(frame)
	if !ok {
		return want{why: "not a plain object"}
	}
	if string(members["jsonrpc"]) != `"2.0"` {
		return want{why: "no jsonrpc 2.0"}
	}
	_, hasMethod := members["method"]
	id, hasID := members["id"]
	if hasMethod {
		if !onlyMembers(members, "jsonrpc", "method", "id", "params") || members["method"][0] != '"' {
			return want{why: "an odd request"}
		}
		if p, ok := members["params"]; ok && p[0] != '{' && p[0] != '[' {
			return want{why: "a request with odd params"}
		}
		if !hasID {
			return want{kind: wantNone, why: "a notification"}
		}
		switch {
		case plainID(id):
			return want{kind: wantID, id: id, why: "a request"}
		case id[0] == '"' || id[0] == '-' || id[0] >= '0' && id[0] <= '9':
			// A string or number the agent may not be able to echo exactly (escapes it cannot
			// hold, bytes that are not UTF-8, numbers past int64): then it must refuse the
			// request, never answer to an id that was not sent.
			return want{kind: wantID, id: id, nullOK: true, why: "a request with an awkward id"}
		}
		return want{why: "a request with an id that is no string or number"}
	}
	_, hasResult := members["result"]
	errObj, hasError := members["error"]
	if !hasID || !plainID(id) || hasResult == hasError || !onlyMembers(members, "jsonrpc", "id", "result", "error") {
		return want{why: "an odd response"}
	}
	if hasError {
		e, ok := objectMembers(errObj)
		if !ok || !onlyMembers(e, "code", "message", "data") || !plainInt(e["code"]) || len(e["message"]) == 0 || e["message"][0] != '"' {
			return want{why: "a response with an odd error"}
		}
	}
	return want{kind: wantNone, why: "a response"}
}

// objectMembers returns the members of a JSON object; ok is false for anything else, and for an
// object with a repeated name.
func objectMembers(raw []byte) (map[string]json.RawMessage, bool) {
	d := json.NewDecoder(bytes.NewReader(raw))
	tok, err := d.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, false
	}
	m := make(map[string]json.RawMessage)
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return nil, false
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, false
		}
		if _, dup := m[name]; dup {
			return nil, false
		}
		m[name] = v
	}
	return m, true
}

func onlyMembers(m map[string]json.RawMessage, names ...string) bool {
	for k := range m {
		ok := false
		for _, n := range names {
			ok = ok || k == n
		}
		if !ok {
			return false
		}
	}
	return true
}

// plainID is an id no one disputes: a string of printable ASCII without escapes, or a
// non-negative integer of at most 18 digits.
func plainID(raw json.RawMessage) bool {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		for _, c := range raw[1 : len(raw)-1] {
			if c < 0x20 || c > 0x7e || c == '\\' || c == '"' {
				return false
			}
		}
		return true
	}
	return plainInt(raw) && raw[0] != '-' && len(raw) <= 18
}

func plainInt(raw json.RawMessage) bool {
	s := raw
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	if len(s) == 0 || len(s) > 18 || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
