package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/sourcegraph/jsonrpc2"
)

// parse classifies one frame and builds its Message as Read does, without a
// socket; nil when Read would not return the frame.
func parse(t testing.TB, s *Stream, frame string) *Message {
	t.Helper()
	v := classify([]byte(frame))
	if v.kind != frameRequest && v.kind != frameResponse {
		return nil
	}
	m, err := s.message(v.kind, &v.env)
	if err != nil {
		t.Fatalf("%s: %v", frame, err)
	}
	return m
}

// TestMessage checks what Read makes of each kind of message.
func TestMessage(t *testing.T) {
	data := json.RawMessage(`{"why":1}`)
	for _, tc := range []struct {
		frame string
		want  Message
	}{
		{`{"jsonrpc":"2.0","method":"mcp/tool/execute","params":{"tool_name": "t"},"id":"c-1"}`,
			Message{Kind: KindRequest, ID: json.RawMessage(`"c-1"`), Method: "mcp/tool/execute", Params: json.RawMessage(`{"tool_name": "t"}`)}},
		{`{"jsonrpc":"2.0","method":"m","id":-1.5e-3}`, Message{Kind: KindRequest, ID: json.RawMessage(`-1.5e-3`), Method: "m"}},
		{`{"jsonrpc":"2.0","method":"m","id":"\ud800x"}`, Message{Kind: KindRequest, ID: json.RawMessage(`"\ud800x"`), Method: "m"}},
		{`{"jsonrpc":"2.0","method":"a\"b\u00e9","params":[]}`, Message{Kind: KindNotification, Method: `a"bé`, Params: json.RawMessage(`[]`)}},
		{`{"jsonrpc":"2.0","method":"m","meta":{"x":1}}`, Message{Kind: KindNotification, Method: "m"}},
		{`{"jsonrpc":"2.0","id":7,"result":null}`, Message{Kind: KindResponse, ID: json.RawMessage(`7`), Result: json.RawMessage(`null`)}},
		{`{"jsonrpc":"2.0","id":"r","result":{"status":"registered"}}`,
			Message{Kind: KindResponse, ID: json.RawMessage(`"r"`), Result: json.RawMessage(`{"status":"registered"}`)}},
		{`{"jsonrpc":"2.0","id":-2,"error":{"code":-32000,"message":"nope","data":{"why":1}}}`,
			Message{Kind: KindResponse, ID: json.RawMessage(`-2`), Error: &jsonrpc2.Error{Code: -32000, Message: "nope", Data: &data}}},
		{`{"jsonrpc":"2.0","id":"e","error":{}}`, Message{Kind: KindResponse, ID: json.RawMessage(`"e"`), Error: &jsonrpc2.Error{}}},
	} {
		got := parse(t, new(Stream), tc.frame)
		if got == nil || fmt.Sprintf("%+v %s", *got, errString(got.Error)) != fmt.Sprintf("%+v %s", tc.want, errString(tc.want.Error)) ||
			(got.Params == nil) != (tc.want.Params == nil) || (got.Result == nil) != (tc.want.Result == nil) {
			t.Errorf("%s:\n got %s\nwant %s", tc.frame, show(got), show(&tc.want))
		}
	}
}

func errString(e *jsonrpc2.Error) string {
	if e == nil {
		return "<nil>"
	}
	data := "<nil>"
	if e.Data != nil {
		data = string(*e.Data)
	}
	return fmt.Sprintf("%d %q %s", e.Code, e.Message, data)
}

func show(m *Message) string {
	if m == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%v id=%s method=%q params=%s result=%s error=%s", m.Kind, m.ID, m.Method, m.Params, m.Result, errString(m.Error))
}

// TestMessageOwnsItsBytes checks that a Message's raw members do not alias
// the frame, which the Stream reuses, nor one another.
func TestMessageOwnsItsBytes(t *testing.T) {
	frame := []byte(`{"jsonrpc":"2.0","method":"m","params":{"a":1},"id":"x"}`)
	v := classify(frame)
	m, err := new(Stream).message(v.kind, &v.env)
	if err != nil {
		t.Fatal(err)
	}
	for i := range frame {
		frame[i] = ' '
	}
	if string(m.ID) != `"x"` || string(m.Params) != `{"a":1}` {
		t.Fatalf("after the frame was overwritten: id %s params %s", m.ID, m.Params)
	}
	m.ID = append(m.ID, "tail"...)
	if string(m.Params) != `{"a":1}` {
		t.Errorf("appending to the id changed the params: %s", m.Params)
	}
}

// TestMessageAllocs pins Read's parse cost: the Message, and one allocation
// for the id and params; the method name of the frame before is reused.
func TestMessageAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	s := new(Stream)
	frame := []byte(benchRequest)
	read := func() {
		v := classify(frame)
		if _, err := s.message(v.kind, &v.env); err != nil {
			t.Fatal(err)
		}
	}
	read()
	if n := testing.AllocsPerRun(100, read); n != 2 {
		t.Errorf("a request costs %v allocations, want 2", n)
	}
	if m := parse(t, s, `{"jsonrpc":"2.0","method":"mcp\/tool/execute"}`); m.Method != "mcp/tool/execute" {
		t.Errorf("an escaped method read as %q", m.Method)
	}
}

// TestWriters checks the exact frames the writers build.
func TestWriters(t *testing.T) {
	raw := json.RawMessage("{ \"a\" : [1, 2] }")
	for _, tc := range []struct {
		name  string
		write func(*bytes.Buffer) error
		want  string
	}{
		{"result raw", func(b *bytes.Buffer) error { return appendResult(b, json.RawMessage(`"c-1"`), raw) },
			`{"jsonrpc":"2.0","id":"c-1","result":{"a":[1,2]}}`},
		{"result value", func(b *bytes.Buffer) error {
			return appendResult(b, json.RawMessage(`-1.5`), map[string]string{"status": "success", "message": "音量 <80>"})
		}, `{"jsonrpc":"2.0","id":-1.5,"result":{"message":"音量 \u003c80\u003e","status":"success"}}`},
		{"result nil", func(b *bytes.Buffer) error { return appendResult(b, json.RawMessage(`1`), nil) },
			`{"jsonrpc":"2.0","id":1,"result":null}`},
		{"result empty raw", func(b *bytes.Buffer) error { return appendResult(b, json.RawMessage(`1`), json.RawMessage(nil)) },
			`{"jsonrpc":"2.0","id":1,"result":null}`},
		{"result lone surrogate id", func(b *bytes.Buffer) error { return appendResult(b, json.RawMessage(`"\ud800x"`), raw) },
			`{"jsonrpc":"2.0","id":"\ud800x","result":{"a":[1,2]}}`},
		{"error with data", func(b *bytes.Buffer) error {
			return appendError(b, json.RawMessage(`"c-2"`), -32602, "Invalid params", struct {
				Details string `json:"details"`
			}{"level: must be <= 100"})
		}, `{"jsonrpc":"2.0","id":"c-2","error":{"code":-32602,"message":"Invalid params","data":{"details":"level: must be \u003c= 100"}}}`},
		{"error raw data", func(b *bytes.Buffer) error { return appendError(b, json.RawMessage(`3`), -32000, "x\n", raw) },
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32000,"message":"x\n","data":{"a":[1,2]}}}`},
		{"error no data", func(b *bytes.Buffer) error { return appendError(b, nil, -32603, "Internal error", nil) },
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}`},
		{"error nil raw data", func(b *bytes.Buffer) error {
			return appendError(b, json.RawMessage(`3`), 1, "m", json.RawMessage(nil))
		}, `{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"m"}}`},
		{"request", func(b *bytes.Buffer) error {
			return appendRequest(b, json.RawMessage(`"reg-1"`), "mcp/registerTools", map[string]any{"tools": []int{}})
		}, `{"jsonrpc":"2.0","id":"reg-1","method":"mcp/registerTools","params":{"tools":[]}}`},
		{"notification", func(b *bytes.Buffer) error { return appendRequest(b, nil, "mcp/ai/message", raw) },
			`{"jsonrpc":"2.0","method":"mcp/ai/message","params":{"a":[1,2]}}`},
		{"notification no params", func(b *bytes.Buffer) error { return appendRequest(b, nil, "m", nil) },
			`{"jsonrpc":"2.0","method":"m"}`},
		{"notification nil map", func(b *bytes.Buffer) error { return appendRequest(b, nil, "m", map[string]int(nil)) },
			`{"jsonrpc":"2.0","method":"m"}`},
		{"request null params", func(b *bytes.Buffer) error {
			return appendRequest(b, json.RawMessage(`1`), "m", json.RawMessage(` null`))
		},
			`{"jsonrpc":"2.0","id":1,"method":"m"}`},
	} {
		var buf bytes.Buffer
		if err := tc.write(&buf); err != nil || buf.String() != tc.want {
			t.Errorf("%s:\n got %s, %v\nwant %s", tc.name, buf.Bytes(), err, tc.want)
		}
	}
}

// TestWriterErrors checks that a writer refuses what would break the frame
// or could not be echoed, and writes nothing then.
func TestWriterErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		write func(*bytes.Buffer) error
		want  error
	}{
		"id object":        {func(b *bytes.Buffer) error { return appendResult(b, json.RawMessage(`{}`), 1) }, errBadID},
		"id with space":    {func(b *bytes.Buffer) error { return appendResult(b, json.RawMessage(`0 `), 1) }, errBadID},
		"id two tokens":    {func(b *bytes.Buffer) error { return appendResult(b, json.RawMessage(`1 2`), 1) }, errBadID},
		"id empty":         {func(b *bytes.Buffer) error { return appendError(b, json.RawMessage{}, 1, "m", nil) }, errBadID},
		"id not UTF-8":     {func(b *bytes.Buffer) error { return appendResult(b, json.RawMessage("\"\xff\""), 1) }, errBadID},
		"request null id":  {func(b *bytes.Buffer) error { return appendRequest(b, json.RawMessage(`null`), "m", nil) }, errBadID},
		"result null id":   {func(b *bytes.Buffer) error { return appendResult(b, json.RawMessage(`null`), 1) }, errBadID},
		"result nil id":    {func(b *bytes.Buffer) error { return appendResult(b, nil, 1) }, errBadID},
		"raw result bad":   {func(b *bytes.Buffer) error { return appendResult(b, json.RawMessage(`1`), json.RawMessage(`{"a":`)) }, nil},
		"value unencoding": {func(b *bytes.Buffer) error { return appendRequest(b, nil, "m", make(chan int)) }, nil},
		"params string":    {func(b *bytes.Buffer) error { return appendRequest(b, nil, "m", "s") }, errParams},
		"params raw 0":     {func(b *bytes.Buffer) error { return appendRequest(b, json.RawMessage(`1`), "m", json.RawMessage(`0`)) }, errParams},
	} {
		var buf bytes.Buffer
		err := tc.write(&buf)
		if err == nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: error %v, want %v", name, err, tc.want)
		}
	}
}

// TestReadIDsEchoed checks ids over a real line through Read and
// WriteResult: every one comes back byte for byte.
func TestReadIDsEchoed(t *testing.T) {
	leakCheck(t)
	srv := newRawServer(t, nil)
	dialRead(t, srv.url(), nil, nil)
	c := srv.accept(t)

	for _, id := range []string{
		`"tool-call-12345-abcdef"`, `42`, `0`, `-0`, `-7`, `1.50`, `2e10`, `-1E-2`, `9223372036854775808`,
		`123456789012345678901234567890`, `""`, `"a\"b"`, `"音量"`, `"\u00e9"`, `"\ud800x"`, `"x\udc00"`, `"\/"`,
	} {
		req := `{"jsonrpc":"2.0","method":"mcp/tool/execute","params":{"tool_name":"t"},"id":` + id + `}`
		writeFrame(t, c, websocket.MessageText, []byte(req))
		_, resp := readFrame(t, c)
		if want := `{"jsonrpc":"2.0","id":` + id + `,"result":{"method":"mcp/tool/execute","params":{"tool_name":"t"}}}`; string(resp) != want {
			t.Errorf("id %s:\n got %s\nwant %s", id, resp, want)
		}
	}

	// A member name spelled with an escape is still that member.
	writeFrame(t, c, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":"e","meth\u006fd":"ping"}`))
	if _, resp := readFrame(t, c); string(resp) != `{"jsonrpc":"2.0","id":"e","result":{"method":"ping"}}` {
		t.Errorf("escaped member name: %s", resp)
	}
}

// TestReadMessages checks over a real line that Read hands over
// notifications in order with their params as sent, and the responses to
// the device's own requests, results and errors, with their ids as sent.
func TestReadMessages(t *testing.T) {
	leakCheck(t)
	srv := newRawServer(t, nil)
	msgs := make(chan *Message, 10)
	s := dialRead(t, srv.url(), nil, msgs)
	c := srv.accept(t)

	for i := range 3 {
		writeFrame(t, c, websocket.MessageText, fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"mcp/ai/message","params":{"type":"chunk", "content":"%d"}}`, i))
	}
	for i := range 3 {
		m := <-msgs
		if want := fmt.Sprintf(`{"type":"chunk", "content":"%d"}`, i); m.Kind != KindNotification || m.Method != "mcp/ai/message" || string(m.Params) != want {
			t.Errorf("notification %d: %s, want params %s", i, show(m), want)
		}
	}

	if err := s.WriteRequest(json.RawMessage(`"reg-1"`), "mcp/registerTools", map[string]string{"mac_addr": "AA-BB-CC-DD-EE-FF"}); err != nil {
		t.Fatal(err)
	}
	if _, b := readFrame(t, c); string(b) != `{"jsonrpc":"2.0","id":"reg-1","method":"mcp/registerTools","params":{"mac_addr":"AA-BB-CC-DD-EE-FF"}}` {
		t.Errorf("request frame %s", b)
	}
	writeFrame(t, c, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":"reg-1","result":{"status":"registered"}}`))
	if m := <-msgs; m.Kind != KindResponse || string(m.ID) != `"reg-1"` || string(m.Result) != `{"status":"registered"}` || m.Error != nil {
		t.Errorf("response %s", show(m))
	}
	writeFrame(t, c, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":-3,"error":{"code":-32000,"message":"nope","data":{"why":1}}}`))
	if m := <-msgs; m.Kind != KindResponse || string(m.ID) != `-3` || m.Result != nil || errString(m.Error) != `-32000 "nope" {"why":1}` {
		t.Errorf("error response %s", show(m))
	}

	if err := s.WriteNotification("mcp/ai/message", json.RawMessage(`{"type":"final"}`)); err != nil {
		t.Fatal(err)
	}
	if _, b := readFrame(t, c); string(b) != `{"jsonrpc":"2.0","method":"mcp/ai/message","params":{"type":"final"}}` {
		t.Errorf("notification frame %s", b)
	}
	if err := s.WriteRequest(nil, "m", nil); !errors.Is(err, errBadID) {
		t.Errorf("WriteRequest without an id: %v, want errBadID", err)
	}
}

// TestReadConcurrentWrites has the device write from many goroutines with
// every writer while Read answers malformed frames: every frame must arrive
// whole.
func TestReadConcurrentWrites(t *testing.T) {
	leakCheck(t)
	srv := newRawServer(t, nil)
	s := dialRead(t, srv.url(), nil, nil)
	c := srv.accept(t)

	writeWhileAnswering(t, c, "frames", func(w, i int) error {
		id := fmt.Appendf(nil, "%d", w*1000+i)
		switch i % 4 {
		case 0:
			return s.WriteResult(id, map[string]int{"w": w})
		case 1:
			return s.WriteError(id, -32000, "failed", json.RawMessage(`{"details":"x"}`))
		case 2:
			return s.WriteRequest(id, "m", []int{w, i})
		default:
			return s.WriteNotification("note", nil)
		}
	}, func(b []byte) bool {
		return json.Valid(b) && strings.HasPrefix(string(b), `{"jsonrpc":"2.0",`)
	})
}
