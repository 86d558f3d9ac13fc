package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log"
	"reflect"
	"strconv"
	"sync"
	"testing"

	"github.com/sourcegraph/jsonrpc2"
)

// TestClassifyKinds covers what the wire tests cannot see: which frames go
// to jsonrpc2 as requests or responses and which are dropped.
func TestClassifyKinds(t *testing.T) {
	for _, tc := range []struct {
		frame string
		want  frameKind
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"x"}`, frameRequest},
		{` {"method":"x","jsonrpc":"2.0","params":{"a":[1,{"b":"}"}]},"id":"s"} `, frameRequest},
		{`{"jsonrpc":"2.0","method":"x","params":[]}`, frameRequest},
		{`{"jsonrpc":"2.0","method":"","meta":{"trace":1},"extra":true}`, frameRequest},
		{`{"jsonrpc":"2\u002e0","method":"x"}`, frameRequest},
		{`{"jsonrpc":"2.0","id":"x","result":null}`, frameResponse},
		{`{"jsonrpc":"2.0","id":0,"result":{"a":"\"}"}}`, frameResponse},
		{`{"jsonrpc":"2.0","id":"x","error":{"code":-32000,"message":"m","data":[1]}}`, frameResponse},
		{`{"jsonrpc":"2.0","id":"x","error":{}}`, frameResponse},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`, frameDrop},
		{`{"jsonrpc":"2.0","id":1.5,"error":{"code":1,"message":"m"}}`, frameResponse},
		{`{"jsonrpc":"2.0","id":-1,"method":"x"}`, frameRequest},
		{`{"jsonrpc":"2.0","id":true,"error":{"code":1,"message":"m"}}`, frameDrop},
		{`{"jsonrpc":"2.0","id":"x","error":{"code":1.5,"message":"m"}}`, frameDrop},
		{`{"jsonrpc":"2.0","id":"x","error":{"code":1,"message":2}}`, frameDrop},
		{`{"jsonrpc":"2.0","id":"x","error":{"code":1,"Code":"s"}}`, frameDrop},
		{`{"jsonrpc":"2.0","id":"x","error":{"code":1,"code":2}}`, frameDrop},
		{`{"jsonrpc":"2.0","id":"x","error":{"code":99999999999999999999}}`, frameDrop},
		{`{"jsonrpc":"2.0","id":"x","ID":1,"error":{"code":1}}`, frameDrop},
		{"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"x\"}", frameInvalid}, // not UTF-8
		{`{"jsonrpc":"2.0","id":1,"method":"x","RESULT":1}`, frameInvalid},
		{`{"jsonrpc":"2.0","id":1,"method":"x","jsonrpc":"2.0"}`, frameInvalid},
		{`{"jsonrpc":"2.0","id":"x","result":1,"error":null}`, frameInvalid},
		{`{`, frameUnparsable},
		{"{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\x00", frameUnparsable},
	} {
		if got := classify([]byte(tc.frame)).kind; got != tc.want {
			t.Errorf("classify(%s) = %v, want %v (details %q)", tc.frame, got, tc.want, classify([]byte(tc.frame)).details)
		}
	}
}

// TestForConn covers how ReadObject narrows the classifier's verdict to the
// ids jsonrpc2 can echo.
func TestForConn(t *testing.T) {
	for _, tc := range []struct {
		frame string
		want  frameKind
	}{
		{`{"jsonrpc":"2.0","method":"x"}`, frameRequest},
		{`{"jsonrpc":"2.0","id":"\ud83d\ude00","method":"x"}`, frameRequest},
		{`{"jsonrpc":"2.0","id":9223372036854775807,"result":1}`, frameResponse},
		{`{"jsonrpc":"2.0","id":-1,"method":"x"}`, frameInvalid},
		{`{"jsonrpc":"2.0","id":"\ud800","method":"x"}`, frameInvalid},
		{`{"jsonrpc":"2.0","id":1e0,"result":1}`, frameInvalid},
		{`{"jsonrpc":"2.0","id":1.5,"error":{"code":1,"message":"m"}}`, frameDrop},
		{`{"jsonrpc":"2.0","id":-0,"error":{"code":1,"message":"m"}}`, frameDrop},
		{`{`, frameUnparsable},
	} {
		if got := forConn(classify([]byte(tc.frame))); got.kind != tc.want {
			t.Errorf("forConn(classify(%s)) = %v, want %v (details %q)", tc.frame, got.kind, tc.want, got.details)
		}
	}
}

// TestClassifyAllocs pins the cost of the common case: a well-formed message
// is classified without allocating.
func TestClassifyAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	frame := []byte(`{"jsonrpc":"2.0","method":"mcp/tool/execute","params":{"tool_name":"amplify_volume","tool_input":{"level":80}},"id":"tool-call-12345-abcdef"}`)
	if n := testing.AllocsPerRun(100, func() { classify(frame) }); n != 0 {
		t.Errorf("classify allocates %v times per well-formed frame, want 0", n)
	}
}

// messageType is jsonrpc2's unexported message type (what its read loop
// passes to ReadObject), caught once by a stream that records it.
var messageType = sync.OnceValue(func() reflect.Type {
	cs := &captureStream{types: make(chan reflect.Type, 1)}
	conn := jsonrpc2.NewConn(context.Background(), cs, echoHandler(nil), jsonrpc2.SetLogger(log.New(io.Discard, "", 0)))
	typ := <-cs.types
	<-conn.DisconnectNotify()
	return typ.Elem()
})

type captureStream struct{ types chan reflect.Type }

func (c *captureStream) ReadObject(v any) error { c.types <- reflect.TypeOf(v); return io.EOF }
func (c *captureStream) WriteObject(any) error  { return io.ErrClosedPipe }
func (c *captureStream) Close() error           { return nil }

// FuzzClassify checks the classifier's promises on any input: it never
// panics; it calls exactly the invalid JSON unparsable; what it lets through
// decodes in jsonrpc2 with the id echoed exactly; and every answer it
// produces is itself a frame that would never be answered, so two peers can
// never bounce errors back and forth.
func FuzzClassify(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		v := classify(data)
		if (v.kind == frameUnparsable) == json.Valid(data) {
			t.Fatalf("kind %v for valid=%v JSON", v.kind, json.Valid(data))
		}
		if v.kind == frameRequest || v.kind == frameResponse {
			checkMessage(t, data, v)
		}
		switch v := forConn(v); v.kind {
		case frameRequest, frameResponse:
			msg := reflect.New(messageType()).Interface()
			if err := json.Unmarshal(data, msg); err != nil {
				t.Fatalf("passed to jsonrpc2 but does not decode: %v", err)
			}
			checkIDRoundTrip(t, data, v.kind)
			fast := asWireMessage(reflect.New(messageType()).Interface())
			if decodeFast(fast, v.kind, &v.env) {
				sameMessage(t, asWireMessage(msg), fast)
			}
		case frameInvalid, frameUnparsable:
			answer := appendAnswer(nil, v)
			if !json.Valid(answer) {
				t.Fatalf("answer is not JSON: %s", answer)
			}
			var resp struct {
				ID    json.RawMessage `json:"id"`
				Error *jsonrpc2.Error `json:"error"`
			}
			if err := json.Unmarshal(answer, &resp); err != nil || resp.ID == nil || resp.Error == nil ||
				(resp.Error.Code != -32600 && resp.Error.Code != -32700) {
				t.Fatalf("answer %s is not an error response: %v", answer, err)
			}
			if k := classify(answer).kind; k != frameResponse && k != frameDrop {
				t.Fatalf("answer %s would itself be answered (kind %v)", answer, k)
			}
		}
	})
}

// checkMessage checks the Message Read builds from a frame against
// encoding/json's reading of the same frame: the same method, the id and the
// params or result byte for byte, the same error.
func checkMessage(t *testing.T, data []byte, v verdict) {
	t.Helper()
	m, err := new(Stream).message(v.kind, &v.env)
	if err != nil {
		t.Fatalf("passed the frame rules but no Message: %v", err)
	}
	var want struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  *jsonrpc2.Error `json:"error"`
	}
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatalf("passed the frame rules but does not decode: %v", err)
	}
	wantKind := KindResponse
	if want.Method != nil {
		wantKind = KindRequest
		if want.ID == nil {
			wantKind = KindNotification
		}
		if m.Method != *want.Method {
			t.Fatalf("method %q, encoding/json reads %q", m.Method, *want.Method)
		}
	}
	if m.Kind != wantKind || !bytes.Equal(m.ID, want.ID) || !bytes.Equal(m.Params, want.Params) ||
		!bytes.Equal(m.Result, want.Result) || errString(m.Error) != errString(want.Error) {
		t.Fatalf("Message %s\nencoding/json reads %+v %s", show(m), want, errString(want.Error))
	}
	if m.ID != nil && checkWriteID(m.ID, false) != nil {
		t.Fatalf("id %s could not be written back: %v", m.ID, checkWriteID(m.ID, false))
	}
}

// checkIDRoundTrip decodes a frame the way jsonrpc2 does and checks that the
// id it would echo is the id received.
func checkIDRoundTrip(t *testing.T, data []byte, kind frameKind) {
	t.Helper()
	var raw struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	var id jsonrpc2.ID
	if kind == frameRequest {
		var req jsonrpc2.Request
		if err := json.Unmarshal(data, &req); err != nil {
			t.Fatalf("request does not decode: %v", err)
		}
		if req.Notif {
			return
		}
		id = req.ID
	} else {
		var resp jsonrpc2.Response
		if err := json.Unmarshal(data, &resp); err != nil {
			t.Fatalf("response does not decode: %v", err)
		}
		if (resp.Result == nil) == (resp.Error == nil) {
			t.Fatalf("response has result %v and error %v", resp.Result, resp.Error)
		}
		id = resp.ID
	}
	if id.IsString {
		var want string
		if err := json.Unmarshal(raw.ID, &want); err != nil || id.Str != want {
			t.Fatalf("string id %s read as %q", raw.ID, id.Str)
		}
		return
	}
	if got := strconv.FormatUint(id.Num, 10); !bytes.Equal([]byte(got), raw.ID) {
		t.Fatalf("numeric id %s would be echoed as %s", raw.ID, got)
	}
}

// TestFastPathActive checks that ReadObject's fast decoder recognises the
// pinned jsonrpc2's message type: if an upgrade changes it, everything still
// works through json.Unmarshal, but this test says the fast path is gone.
func TestFastPathActive(t *testing.T) {
	for _, v := range []any{nil, new(json.RawMessage), new(jsonrpc2.Request), struct{}{}} {
		if asWireMessage(v) != nil {
			t.Errorf("asWireMessage(%T) accepted a type that is not jsonrpc2's message", v)
		}
	}
	if asWireMessage(reflect.New(messageType()).Interface()) == nil {
		t.Fatalf("jsonrpc2's %v does not have the layout of wireMessage", messageType())
	}
	if asWireMessage(reflect.Zero(reflect.PointerTo(messageType())).Interface()) != nil {
		t.Error("asWireMessage accepted a nil pointer")
	}
	for _, v := range []any{nil, new(json.RawMessage), new(jsonrpc2.Request), struct{}{}} {
		if asWireMessage(v) != nil {
			t.Errorf("asWireMessage(%T) accepted a type that is not jsonrpc2's message", v)
		}
	}
}

// sameMessage checks that decodeFast built what jsonrpc2's decoder built;
// params may differ in bytes (jsonrpc2 encodes them again) but not in value.
func sameMessage(t *testing.T, slow, fast *wireMessage) {
	t.Helper()
	switch {
	case slow.request != nil && fast.request != nil:
		s, f := slow.request, fast.request
		if s.Method != f.Method || s.ID != f.ID || s.Notif != f.Notif || s.Meta != nil || f.Meta != nil ||
			len(s.ExtraFields) != 0 || len(f.ExtraFields) != 0 {
			t.Fatalf("request differs:\njsonrpc2: %+v\n    fast: %+v", s, f)
		}
		if (s.Params == nil) != (f.Params == nil) || s.Params != nil && !sameValue(t, *s.Params, *f.Params) {
			t.Fatalf("params differ:\njsonrpc2: %s\n    fast: %s", ptrString(s.Params), ptrString(f.Params))
		}
	case slow.response != nil && fast.response != nil:
		s, f := slow.response, fast.response
		if s.ID != f.ID || s.Error != nil || f.Error != nil || s.Meta != nil || f.Meta != nil ||
			s.Result == nil || f.Result == nil || !bytes.Equal(*s.Result, *f.Result) {
			t.Fatalf("response differs:\njsonrpc2: %+v\n    fast: %+v", s, f)
		}
	default:
		t.Fatalf("message kinds differ: jsonrpc2 %+v, fast %+v", slow, fast)
	}
}

func sameValue(t *testing.T, a, b []byte) bool {
	t.Helper()
	decode := func(raw []byte) any {
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		return v
	}
	return reflect.DeepEqual(decode(a), decode(b))
}

func ptrString(p *json.RawMessage) string {
	if p == nil {
		return "<nil>"
	}
	return string(*p)
}

// FuzzAppendString checks appendString against json.Marshal, byte for byte.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "tool-call-12345-abcdef", "音量已成功设置为 80", "a\"b\\c\n\r\t\b\f\x00\x1f", "<&>", "\u2028\u2029", "\xff\xfe", "é\xc3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("appendString(%q) = %s, json.Marshal = %s", s, got, want)
		}
	})
}

// FuzzEncode checks encodeFast against jsonrpc2's own marshalling: the same
// JSON value, or an error for both.
func FuzzEncode(f *testing.F) {
	f.Add(false, "mcp/registerTools", "reg-1", uint64(0), true, false, []byte(`{"mac_addr":"AA-BB-CC-DD-EE-FF","tools":[]}`), int64(0))
	f.Add(false, "mcp/ai/message", "", uint64(0), false, true, []byte(`{"type":"chunk"}`), int64(0))
	f.Add(true, "", "tool-call-1", uint64(0), true, false, []byte(`{"status":"success","message":"音量 <80>"}`), int64(0))
	f.Add(true, "", "", uint64(42), false, false, []byte(` [1, 2] `), int64(0))
	f.Add(true, "device busy", "", uint64(7), false, false, []byte(`{"details":"x"}`), int64(-32002))
	f.Add(true, "failed", "x", uint64(0), true, false, []byte(nil), int64(-32000))
	f.Add(false, "m", "", uint64(1), false, false, []byte(`{"a":`), int64(0))
	f.Fuzz(func(t *testing.T, response bool, text, idStr string, idNum uint64, idIsString, notif bool, raw []byte, code int64) {
		slow := reflect.New(messageType()).Interface()
		m := asWireMessage(slow)
		id := jsonrpc2.ID{Num: idNum, Str: idStr, IsString: idIsString}
		if idIsString {
			id.Num = 0
		} else {
			id.Str = ""
		}
		var rawp *json.RawMessage
		if raw != nil {
			rawp = (*json.RawMessage)(&raw)
		}
		switch {
		case !response:
			m.request = &jsonrpc2.Request{Method: text, ID: id, Notif: notif, Params: rawp}
		case code == 0:
			m.response = &jsonrpc2.Response{ID: id, Result: rawp}
		default:
			m.response = &jsonrpc2.Response{ID: id, Error: &jsonrpc2.Error{Code: code, Message: text, Data: rawp}}
		}

		want, wantErr := json.Marshal(slow)
		var buf bytes.Buffer
		ok, err := encodeFast(&buf, m)
		if !ok {
			return // jsonrpc2's own encoder handles it
		}
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("encodeFast error %v, json.Marshal error %v", err, wantErr)
		}
		if err != nil {
			return
		}
		if !json.Valid(buf.Bytes()) || !sameValue(t, buf.Bytes(), want) {
			t.Fatalf("encodeFast wrote %s\n  jsonrpc2 writes %s", buf.Bytes(), want)
		}
	})
}

func TestLoneSurrogate(t *testing.T) {
	for raw, want := range map[string]bool{
		`"\ud800x"`:          true,
		`"x\udc00"`:          true,
		`"\ud800\u0041"`:     true,
		`"\ud83d\ude00"`:     false, // a pair: 😀
		`"\ud83d\ude00\ud8"`: false, // cut short: not a \u escape the classifier would pass
		`"\\ud800"`:          false, // an escaped backslash, then text
		`"\u00e9t\u00e9"`:    false,
		`"plain"`:            false,
	} {
		if got := loneSurrogate([]byte(raw)); got != want {
			t.Errorf("loneSurrogate(%s) = %v, want %v", raw, got, want)
		}
	}
}
