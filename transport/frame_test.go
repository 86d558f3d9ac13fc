package transport

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/devicectl/devicectl/protocol"
)

// TestClassifyKinds covers what the wire tests cannot see: which frames go
// to the reader as requests or responses and which are dropped.
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

// FuzzClassify checks the classifier's promises on any input: it never
// panics; it calls exactly the invalid JSON unparsable; what it lets through
// becomes a Message that agrees with encoding/json, with an id that can be
// written back; what forConn lets through decodes in jsonrpc2 with the id
// echoed exactly; and every answer it produces is itself a frame that would
// never be answered, so two peers can never bounce errors back and forth.
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
			checkIDRoundTrip(t, data, v.kind)
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

// FuzzWrite checks the writers against Read: whatever a writer accepts is
// one frame that Read takes back as the same message, with the id byte for
// byte, the method as encoding/json would carry it and the raw value
// compacted. What a writer refuses is an id that is not one string or number
// token, or raw JSON that is not valid.
func FuzzWrite(f *testing.F) {
	f.Add(uint8(0), []byte(`"tool-call-1"`), "", []byte(`{"status":"success","message":"音量 <80>"}`), int64(0))
	f.Add(uint8(0), []byte(`-1.5e3`), "", []byte(` [1, 2] `), int64(0))
	f.Add(uint8(0), []byte(`"\ud800x"`), "", []byte(`null`), int64(0))
	f.Add(uint8(1), []byte(`7`), "device busy", []byte(`{"details":"x"}`), int64(-32002))
	f.Add(uint8(1), []byte(`null`), "Parse error", []byte(nil), int64(-32700))
	f.Add(uint8(1), []byte(`"x"`), "failed\n<&>\xff", []byte(`"s"`), int64(-32000))
	f.Add(uint8(2), []byte(`"reg-1"`), "mcp/registerTools", []byte(`{"mac_addr":"AA-BB-CC-DD-EE-FF","tools":[]}`), int64(0))
	f.Add(uint8(3), []byte(nil), "mcp/ai/message", []byte(`{"type":"chunk"}`), int64(0))
	f.Add(uint8(3), []byte(nil), "m", []byte(`{"a":`), int64(0))
	f.Add(uint8(2), []byte(`{}`), "m", []byte(`[]`), int64(0))
	f.Add(uint8(0), []byte("\"\xff\""), "", []byte(`1`), int64(0))
	f.Fuzz(func(t *testing.T, which uint8, id []byte, text string, raw []byte, code int64) {
		var value any = json.RawMessage(raw) // empty: no member, or a null result
		if len(raw) == 0 {
			raw = nil
		}
		var buf bytes.Buffer
		var err error
		want := Message{ID: id}
		idOK := id == nil || checkWriteID(id, true) == nil
		switch which % 4 {
		case 0:
			want.Kind = KindResponse
			idOK = id != nil && checkWriteID(id, false) == nil
			err = appendResult(&buf, id, value)
		case 1:
			want.Kind = KindResponse
			err = appendError(&buf, id, code, text, value)
		case 2: // a request; without an id, a notification
			want.Kind, want.Method = KindRequest, text
			if id == nil {
				want.Kind = KindNotification
			}
			idOK = id == nil || checkWriteID(id, false) == nil
			err = appendRequest(&buf, id, text, value)
		case 3:
			want.Kind, want.Method, want.ID = KindNotification, text, nil
			idOK = true
			err = appendRequest(&buf, nil, text, value)
		}
		rawOK := raw == nil || json.Valid(raw)
		if which%4 == 1 && rawOK && raw != nil && bytes.TrimLeft(raw, " \t\r\n")[0] == 'n' {
			raw = nil // null error data: none
		}
		if which%4 >= 2 && rawOK && raw != nil {
			switch c := bytes.TrimLeft(raw, " \t\r\n")[0]; c {
			case 'n':
				raw = nil // null params: none
			default:
				rawOK = c == '{' || c == '['
			}
		}
		if (err == nil) != (idOK && rawOK) {
			t.Fatalf("writer error %v for id %q (ok %v) and value %q (ok %v)", err, id, idOK, raw, rawOK)
		}
		if err != nil {
			return
		}
		frame := buf.Bytes()
		v := classify(frame)
		if which%4 == 1 && (id == nil || string(id) == "null") {
			if v.kind != frameDrop { // an error without an id: never handed to a reader
				t.Fatalf("%s classified %v, want dropped", frame, v.kind)
			}
			return
		}
		if v.kind != frameRequest && v.kind != frameResponse {
			t.Fatalf("%s classified %v (%s)", frame, v.kind, v.details)
		}
		got, err := new(Stream).message(v.kind, &v.env)
		if err != nil {
			t.Fatalf("%s: %v", frame, err)
		}
		want.Method = roundTrip(t, want.Method)
		if got.Kind != want.Kind || !bytes.Equal(got.ID, want.ID) || got.Method != want.Method {
			t.Fatalf("%s read back as %s, want %s", frame, show(got), show(&want))
		}
		var compact []byte
		if raw != nil {
			var c bytes.Buffer
			if err := json.Compact(&c, raw); err != nil {
				t.Fatal(err)
			}
			compact = c.Bytes()
		}
		switch which % 4 {
		case 0:
			if raw == nil {
				compact = []byte("null")
			}
			if !bytes.Equal(got.Result, compact) {
				t.Fatalf("result %s read back as %s", raw, got.Result)
			}
		case 1:
			if got.Error == nil || got.Error.Code != code || got.Error.Message != roundTrip(t, text) ||
				(got.Error.Data == nil) != (raw == nil) || raw != nil && !bytes.Equal(*got.Error.Data, compact) {
				t.Fatalf("error read back as %s", errString(got.Error))
			}
		default:
			if !bytes.Equal(got.Params, compact) {
				t.Fatalf("params %s read back as %s", raw, got.Params)
			}
		}
	})
}

// roundTrip is s as encoding/json carries it (invalid UTF-8 becomes U+FFFD).
func roundTrip(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back string
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	return back
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

// TestAnswerCodes holds the codes spelled out in appendAnswer's frames to package protocol's.
func TestAnswerCodes(t *testing.T) {
	for _, tc := range []struct {
		v    verdict
		want int64
	}{
		{verdict{kind: frameUnparsable}, protocol.CodeParseError},
		{verdict{kind: frameInvalid, id: []byte(`"7"`), details: "batch"}, protocol.CodeInvalidRequest},
	} {
		var m struct {
			Error struct{ Code int64 }
		}
		b := appendAnswer(nil, tc.v)
		if err := json.Unmarshal(b, &m); err != nil || m.Error.Code != tc.want {
			t.Errorf("%s: code %d, %v; want %d", b, m.Error.Code, err, tc.want)
		}
	}
}
