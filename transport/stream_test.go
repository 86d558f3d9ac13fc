package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/sourcegraph/jsonrpc2"
)

// invalidFrame is the -32600 answer with the given raw id and details.
func invalidFrame(id, details string) string {
	d, _ := json.Marshal(details)
	return `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32600,"message":"Invalid Request","data":{"details":` + string(d) + `}}}`
}

const parseErrorFrame = `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`

// frameRules is every frame rule: what the peer sends and the exact frame the
// Stream answers with ("" means no answer: passed to jsonrpc2 or dropped).
var frameRules = []struct {
	name   string
	binary bool
	frame  string
	want   string
}{
	{"not JSON", false, `hello`, parseErrorFrame},
	{"truncated", false, `{"jsonrpc":"2.0","id":1,"method":"x"`, parseErrorFrame},
	{"empty frame", false, ``, parseErrorFrame},
	{"trailing garbage", false, `{"jsonrpc":"2.0","id":1,"method":"x"} x`, parseErrorFrame},
	{"batch", false, `[{"jsonrpc":"2.0","id":1,"method":"x"}]`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"details":"batch requests are not supported: send one message per frame"}}}`},
	{"empty batch", false, ` [] `, invalidFrame("null", "batch requests are not supported: send one message per frame")},
	{"binary frame", true, `{"jsonrpc":"2.0","id":1,"method":"x"}`,
		invalidFrame("null", "binary frame: each message must be a JSON text frame")},
	{"number", false, `42`, invalidFrame("null", "a message must be a JSON object, not a number")},
	{"string", false, `"hi"`, invalidFrame("null", "a message must be a JSON object, not a string")},
	{"null", false, `null`, invalidFrame("null", "a message must be a JSON object, not null")},
	{"not a message", false, `{"foo":1}`, invalidFrame("null", `missing member "jsonrpc": it must be "2.0"`)},
	{"missing jsonrpc", false, `{"id":1,"method":"x"}`, invalidFrame("1", `missing member "jsonrpc": it must be "2.0"`)},
	{"wrong jsonrpc", false, `{"jsonrpc":"1.0","id":"a","method":"x"}`, invalidFrame(`"a"`, `"jsonrpc" must be "2.0", got "1.0"`)},
	{"jsonrpc number", false, `{"jsonrpc":2.0,"id":"a","method":"x"}`, invalidFrame(`"a"`, `"jsonrpc" must be "2.0", got 2.0`)},
	{"method number", false, `{"jsonrpc":"2.0","id":7,"method":5}`, invalidFrame("7", `"method" must be a string, got a number`)},
	{"method null", false, `{"jsonrpc":"2.0","id":7,"method":null}`, invalidFrame("7", `"method" must be a string, got null`)},
	{"id object", false, `{"jsonrpc":"2.0","id":{"a":1},"method":"x"}`,
		invalidFrame("null", `"id" must be a string or a number, got an object`)},
	{"id null", false, `{"jsonrpc":"2.0","id":null,"method":"x"}`,
		invalidFrame("null", `"id" must be a string or a number, got null`)},
	{"id boolean", false, `{"jsonrpc":"2.0","id":true,"method":"x"}`,
		invalidFrame("null", `"id" must be a string or a number, got a boolean`)},
	{"id not UTF-8", false, "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"x\"}",
		invalidFrame("null", `"id" is not valid UTF-8`)},
	{"params string", false, `{"jsonrpc":"2.0","id":3,"method":"x","params":"s"}`,
		invalidFrame("3", `"params" must be an object or an array, got a string`)},
	{"params null", false, `{"jsonrpc":"2.0","id":3,"method":"x","params":null}`,
		invalidFrame("3", `"params" must be an object or an array, got null`)},
	{"request with result", false, `{"jsonrpc":"2.0","id":3,"method":"x","result":1}`,
		invalidFrame("3", `a request (it has "method") must not have "result" or "error"`)},
	{"response with both", false, `{"jsonrpc":"2.0","id":"r","result":1,"error":{"code":1,"message":"m"}}`,
		invalidFrame(`"r"`, `a response must have "result" or "error", not both`)},
	{"response with neither", false, `{"jsonrpc":"2.0","id":4}`,
		invalidFrame("4", `the message has no "method" and no "result" or "error": it is neither a request nor a response`)},
	{"response without id", false, `{"jsonrpc":"2.0","result":1}`, invalidFrame("null", `a response must have an "id"`)},
	{"result with null id", false, `{"jsonrpc":"2.0","id":null,"result":1}`,
		invalidFrame("null", `"id" must be a string or a number, got null`)},
	{"name differs in case", false, `{"jsonrpc":"2.0","id":1,"Method":"x"}`,
		invalidFrame("1", `member "Method" is not "method": member names are case-sensitive`)},
	{"name folds to params", false, `{"jsonrpc":"2.0","id":1,"method":"x","paramſ":{}}`,
		invalidFrame("1", `member "paramſ" is not "params": member names are case-sensitive`)},
	{"duplicate id", false, `{"jsonrpc":"2.0","id":1,"id":-2,"method":"x"}`,
		invalidFrame("null", `member "id" appears more than once`)},
	{"duplicate method", false, `{"jsonrpc":"2.0","id":1,"method":"x","method":"y"}`,
		invalidFrame("1", `member "method" appears more than once`)},

	// Not answered.
	{"response nobody asked for", false, `{"jsonrpc":"2.0","id":"nobody","result":1}`, ""},
	{"error response without id", false, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`, ""},
	{"error response with bad id", false, `{"jsonrpc":"2.0","id":true,"error":{"code":-32600,"message":"Invalid Request"}}`, ""},
	{"error response with negative id", false, `{"jsonrpc":"2.0","id":-1,"error":{"code":-32600,"message":"Invalid Request"}}`, ""},
	{"error not an object", false, `{"jsonrpc":"2.0","id":"x","error":"boom"}`, ""},
	{"error code not an integer", false, `{"jsonrpc":"2.0","id":"x","error":{"code":"1","message":"m"}}`, ""},
	{"error without jsonrpc", false, `{"id":"x","error":{"code":1,"message":"m"}}`, ""},
	{"notification", false, `{"jsonrpc":"2.0","method":"note","params":[1]}`, ""},
}

// idRules are the ids Read keeps byte for byte but a jsonrpc2.Conn cannot
// (see forConn): read is the answer through Read, conn through ReadObject.
var idRules = []struct {
	name, frame, read, conn string
}{
	{"id negative", `{"jsonrpc":"2.0","id":-1,"method":"x"}`,
		`{"jsonrpc":"2.0","id":-1,"result":{"method":"x"}}`,
		invalidFrame("-1", `"id" must be a string or a non-negative integer, got -1`)},
	{"id fraction", `{"jsonrpc":"2.0","id":1.50,"method":"x"}`,
		`{"jsonrpc":"2.0","id":1.50,"result":{"method":"x"}}`,
		invalidFrame("1.50", `"id" must be a string or a non-negative integer, got 1.50`)},
	{"id exponent", `{"jsonrpc":"2.0","id":1E+3,"method":"x"}`,
		`{"jsonrpc":"2.0","id":1E+3,"result":{"method":"x"}}`,
		invalidFrame("1E+3", `"id" must be a string or a non-negative integer, got 1E+3`)},
	{"id over int64", `{"jsonrpc":"2.0","id":9223372036854775808,"method":"x"}`,
		`{"jsonrpc":"2.0","id":9223372036854775808,"result":{"method":"x"}}`,
		invalidFrame("9223372036854775808", `"id" must be a string or a non-negative integer up to 9223372036854775807, got 9223372036854775808`)},
	{"id lone surrogate", `{"jsonrpc":"2.0","id":"\ud800x","method":"x"}`,
		`{"jsonrpc":"2.0","id":"\ud800x","result":{"method":"x"}}`,
		invalidFrame(`"\ud800x"`, `"id" holds a lone UTF-16 surrogate escape, which cannot be echoed back`)},
	{"result with negative id", `{"jsonrpc":"2.0","id":-5,"result":1}`,
		"", invalidFrame("-5", `"id" must be a string or a non-negative integer, got -5`)},
	{"result with fractional id", `{"jsonrpc":"2.0","id":0.5,"result":1}`,
		"", invalidFrame("0.5", `"id" must be a string or a non-negative integer, got 0.5`)},
}

// readers are the two ways to serve a Stream: the device's read loop over
// Read, and a jsonrpc2.Conn over ReadObject (the agent and test side). Both
// answer a request with echoResult.
var readers = []struct {
	name string
	dial func(t *testing.T, url string, opts *DialOptions) *Stream
}{
	{"Read", func(t *testing.T, url string, opts *DialOptions) *Stream {
		return dialRead(t, url, opts, make(chan *Message, 10))
	}},
	{"ReadObject", func(t *testing.T, url string, opts *DialOptions) *Stream {
		_, s := dialConn(t, url, opts, echoHandler(make(chan *jsonrpc2.Request, 10)))
		return s
	}},
}

// TestFrameRules sends each rule's frame to a device, through either reader,
// and checks the exact answer, then that the same connection still serves a
// request.
func TestFrameRules(t *testing.T) {
	type rule struct {
		name, frame, want string
		binary            bool
	}
	for _, r := range readers {
		rules := make([]rule, 0, len(frameRules)+len(idRules))
		for _, tc := range frameRules {
			rules = append(rules, rule{tc.name, tc.frame, tc.want, tc.binary})
		}
		for _, tc := range idRules {
			want := tc.read
			if r.name == "ReadObject" {
				want = tc.conn
			}
			rules = append(rules, rule{tc.name, tc.frame, want, false})
		}
		for _, tc := range rules {
			t.Run(r.name+"/"+tc.name, func(t *testing.T) {
				leakCheck(t)
				srv := newRawServer(t, nil)
				r.dial(t, srv.url(), nil)
				c := srv.accept(t)

				typ := websocket.MessageText
				if tc.binary {
					typ = websocket.MessageBinary
				}
				writeFrame(t, c, typ, []byte(tc.frame))
				if tc.want != "" {
					gotTyp, got := readFrame(t, c)
					if gotTyp != websocket.MessageText || !sameAnswer(t, got, tc.want) {
						t.Errorf("answer (%v):\n got %s\nwant %s", gotTyp, got, tc.want)
					}
				}

				// Still serving: the next frame is the answer to this
				// request, so nothing else was sent in between.
				writeFrame(t, c, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":"after","method":"ping"}`))
				_, got := readFrame(t, c)
				if want := `{"jsonrpc":"2.0","id":"after","result":{"method":"ping"}}`; !sameAnswer(t, got, want) {
					t.Errorf("after the frame:\n got %s\nwant %s", got, want)
				}
			})
		}
	}
}

// sameAnswer compares an answer with the expected frame: the Stream's own
// answers and Read's writers byte for byte; a frame jsonrpc2 marshalled
// (its member order is its own) by value, with the id byte for byte.
func sameAnswer(t *testing.T, got []byte, want string) bool {
	t.Helper()
	if string(got) == want {
		return true
	}
	return !bytes.HasPrefix(got, []byte(`{"jsonrpc"`)) && sameJSON(t, got, json.RawMessage(want)) &&
		bytes.Equal(idOf(t, got), idOf(t, []byte(want)))
}

// TestIDsEchoed checks that the ids a jsonrpc2.Conn can take reach its
// handler and come back exactly as sent: a string stays a string, a number
// stays the same number. (TestReadIDsEchoed covers Read.)
func TestIDsEchoed(t *testing.T) {
	leakCheck(t)
	srv := newRawServer(t, nil)
	dialConn(t, srv.url(), nil, echoHandler(nil))
	c := srv.accept(t)

	for _, id := range []string{
		`"tool-call-12345-abcdef"`, `42`, `0`, `9223372036854775807`, `""`, `"a\"b"`, `"音量"`, `"\u00e9"`,
	} {
		req := `{"jsonrpc":"2.0","method":"mcp/tool/execute","params":{"tool_name":"t"},"id":` + id + `}`
		writeFrame(t, c, websocket.MessageText, []byte(req))
		_, resp := readFrame(t, c)
		got := idOf(t, resp)
		if !sameJSON(t, got, json.RawMessage(id)) {
			t.Errorf("id %s came back as %s", id, got)
		}
		if !strings.Contains(id, `\u`) && string(got) != id {
			t.Errorf("id %s came back as %s: not byte-exact", id, got)
		}
	}

	// A member name spelled with an escape is still that member.
	writeFrame(t, c, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":"e","meth\u006fd":"ping"}`))
	_, resp := readFrame(t, c)
	if want := `{"jsonrpc":"2.0","id":"e","result":{"method":"ping"}}`; !sameAnswer(t, resp, want) {
		t.Errorf("escaped member name:\n got %s\nwant %s", resp, want)
	}
}

// sameJSON compares two JSON values by meaning and type (numbers exactly).
func sameJSON(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	decode := func(raw json.RawMessage) any {
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		return v
	}
	return fmt.Sprintf("%T %v", decode(a), decode(a)) == fmt.Sprintf("%T %v", decode(b), decode(b))
}

// TestNotificationsInOrder checks notifications reach a jsonrpc2 handler in
// order. (TestReadMessages covers Read.)
func TestNotificationsInOrder(t *testing.T) {
	leakCheck(t)
	srv := newRawServer(t, nil)
	notes := make(chan *jsonrpc2.Request, 10)
	dialConn(t, srv.url(), nil, echoHandler(notes))
	c := srv.accept(t)
	for i := range 5 {
		writeFrame(t, c, websocket.MessageText, fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"mcp/ai/message","params":{"type":"chunk","content":"%d"}}`, i))
	}
	for i := range 5 {
		r := <-notes
		// jsonrpc2 decodes and encodes params again: the same value.
		if want := fmt.Sprintf(`{"type":"chunk","content":"%d"}`, i); r.Method != "mcp/ai/message" || !sameJSON(t, *r.Params, json.RawMessage(want)) {
			t.Errorf("notification %d: %s %s, want %s", i, r.Method, *r.Params, want)
		}
	}
}

// TestCallResponses checks that responses to the device's own calls, results
// and errors, pass through to the caller.
func TestCallResponses(t *testing.T) {
	leakCheck(t)
	srv := newRawServer(t, nil)
	conn, _ := dialConn(t, srv.url(), nil, echoHandler(nil))
	c := srv.accept(t)

	type call struct {
		res json.RawMessage
		err error
	}
	results := make(chan call, 1)
	callAsync := func(id string) {
		go func() {
			var res json.RawMessage
			err := conn.Call(t.Context(), "mcp/registerTools", map[string]any{"mac_addr": "AA-BB-CC-DD-EE-FF"}, &res,
				jsonrpc2.PickID(jsonrpc2.ID{Str: id, IsString: true}))
			results <- call{res, err}
		}()
	}

	callAsync("reg-1")
	_, req := readFrame(t, c)
	if got := idOf(t, req); string(got) != `"reg-1"` {
		t.Fatalf("request id %s, want \"reg-1\"", got)
	}
	writeFrame(t, c, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":"reg-1","result":{"status":"registered"}}`))
	if r := <-results; r.err != nil || string(r.res) != `{"status":"registered"}` {
		t.Errorf("Call = %s, %v", r.res, r.err)
	}

	callAsync("reg-2")
	readFrame(t, c)
	writeFrame(t, c, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":"reg-2","error":{"code":-32000,"message":"nope","data":{"why":1}}}`))
	r := <-results
	var rpcErr *jsonrpc2.Error
	if !errors.As(r.err, &rpcErr) || rpcErr.Code != -32000 || rpcErr.Message != "nope" {
		t.Errorf("Call error = %v, want code -32000 \"nope\"", r.err)
	}
}

// TestConcurrentWrites has the device write from many goroutines while it
// answers malformed frames: every frame must arrive whole.
func TestConcurrentWrites(t *testing.T) {
	leakCheck(t)
	srv := newRawServer(t, nil)
	conn, _ := dialConn(t, srv.url(), nil, echoHandler(nil))
	c := srv.accept(t)

	writeWhileAnswering(t, c, "notifications", func(w, i int) error {
		return conn.Notify(t.Context(), "note", map[string]int{"w": w, "i": i})
	}, func(b []byte) bool {
		return json.Valid(b) && bytes.Contains(b, []byte(`"method":"note"`))
	})
}

// TestReadLimit checks a message at the limit is served and one byte more
// closes the connection with 1009 without hurting the process.
func TestReadLimit(t *testing.T) {
	leakCheck(t)
	srv := newRawServer(t, nil)
	const limit = 1024
	conn, s := dialConn(t, srv.url(), &DialOptions{ReadLimit: limit}, echoHandler(nil))
	c := srv.accept(t)

	frame := func(size int) []byte {
		head := `{"jsonrpc":"2.0","id":1,"method":"x","params":["`
		tail := `"]}`
		return []byte(head + strings.Repeat("a", size-len(head)-len(tail)) + tail)
	}
	writeFrame(t, c, websocket.MessageText, frame(limit))
	if _, resp := readFrame(t, c); string(idOf(t, resp)) != "1" {
		t.Fatalf("a message of exactly the limit was not served: %s", resp)
	}

	writeFrame(t, c, websocket.MessageText, frame(limit+1))
	_, _, err := c.Read(t.Context())
	if got := websocket.CloseStatus(err); got != websocket.StatusMessageTooBig {
		t.Errorf("server read after an oversized message: %v (status %v), want close 1009", err, got)
	}
	waitDone(t, s)
	<-conn.DisconnectNotify()
	if !errors.Is(s.Err(), websocket.ErrMessageTooBig) {
		t.Errorf("Err() = %v, want websocket.ErrMessageTooBig", s.Err())
	}
}

// TestCloseSendsNormalClosure checks Close's close frame (1000), Done and Err,
// and that Close is idempotent and safe from several goroutines.
func TestCloseSendsNormalClosure(t *testing.T) {
	leakCheck(t)
	srv := newRawServer(t, nil)
	s := mustDial(t, srv.url(), nil)
	c := srv.accept(t)
	if s.Err() != nil {
		t.Errorf("Err() before the end = %v, want nil", s.Err())
	}

	errs := make(chan error, 3)
	for range 3 {
		go func() { errs <- s.Close() }()
	}
	// The server reads the close frame; coder/websocket answers it.
	_, _, err := c.Read(t.Context())
	if got := websocket.CloseStatus(err); got != websocket.StatusNormalClosure {
		t.Errorf("server saw %v (status %v), want close 1000", err, got)
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Errorf("Close() = %v", err)
		}
	}
	waitDone(t, s)
	if !errors.Is(s.Err(), net.ErrClosed) {
		t.Errorf("Err() = %v, want net.ErrClosed", s.Err())
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close() again = %v", err)
	}
	if err := s.WriteObject(map[string]int{"a": 1}); !errors.Is(err, net.ErrClosed) {
		t.Errorf("WriteObject after Close = %v, want net.ErrClosed", err)
	}
	if err := s.ReadObject(new(json.RawMessage)); err == nil {
		t.Error("ReadObject after Close succeeded")
	}
}

// TestShutdownSendsGoingAway: a side that stops says so (1001), and the peer's end of the line
// reads as a normal close, as does 1000; a broken line does not.
func TestShutdownSendsGoingAway(t *testing.T) {
	leakCheck(t)
	srv := newRawServer(t, nil)
	s := mustDial(t, srv.url(), nil)
	c := srv.accept(t)
	done := make(chan error, 1)
	go func() { done <- s.Shutdown() }()
	_, _, err := c.Read(t.Context())
	if got := websocket.CloseStatus(err); got != websocket.StatusGoingAway {
		t.Errorf("peer saw %v (status %v), want close 1001", err, got)
	}
	if !ClosedNormally(err) {
		t.Errorf("ClosedNormally(%v) = false", err)
	}
	if err := <-done; err != nil {
		t.Errorf("Shutdown() = %v", err)
	}
	for _, err := range []error{
		fmt.Errorf("connection lost: %w", websocket.CloseError{Code: websocket.StatusNormalClosure}),
	} {
		if !ClosedNormally(err) {
			t.Errorf("ClosedNormally(%v) = false", err)
		}
	}
	for _, err := range []error{
		websocket.CloseError{Code: websocket.StatusInternalError},
		ErrPingTimeout, net.ErrClosed, nil,
	} {
		if ClosedNormally(err) {
			t.Errorf("ClosedNormally(%v) = true", err)
		}
	}
}

// TestPeerClose checks that a close from the peer ends the Stream with the
// peer's status.
func TestPeerClose(t *testing.T) {
	leakCheck(t)
	srv := newRawServer(t, nil)
	conn, s := dialConn(t, srv.url(), nil, echoHandler(nil))
	c := srv.accept(t)
	if err := c.Close(websocket.StatusGoingAway, "restarting"); err != nil {
		t.Errorf("server Close: %v", err)
	}
	waitDone(t, s)
	<-conn.DisconnectNotify()
	if got := websocket.CloseStatus(s.Err()); got != websocket.StatusGoingAway {
		t.Errorf("Err() = %v, want the peer's close 1001", s.Err())
	}
}

// TestAcceptSide runs the Stream on the server side: a client's call is
// answered, a bad frame gets its answer, and Close sends 1000.
func TestAcceptSide(t *testing.T) {
	leakCheck(t)
	streams := make(chan *Stream, 1)
	srv := newAcceptServer(t, &AcceptOptions{PingInterval: -1}, streams)

	ctx := t.Context()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	s := <-streams
	conn := NewConn(context.Background(), s, echoHandler(nil), nil)

	writeFrame(t, c, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":5,"method":"hello"}`))
	if _, b := readFrame(t, c); !sameAnswer(t, b, `{"jsonrpc":"2.0","id":5,"result":{"method":"hello"}}`) {
		t.Errorf("answer %s", b)
	}
	writeFrame(t, c, websocket.MessageText, []byte(`[]`))
	if _, b := readFrame(t, c); string(b) != invalidFrame("null", "batch requests are not supported: send one message per frame") {
		t.Errorf("answer %s", b)
	}

	closed := make(chan error, 1)
	go func() { closed <- conn.Close() }()
	_, _, err = c.Read(ctx)
	if got := websocket.CloseStatus(err); got != websocket.StatusNormalClosure {
		t.Errorf("client saw %v, want close 1000", err)
	}
	if err := <-closed; err != nil {
		t.Errorf("Conn.Close() = %v", err)
	}
	waitDone(t, s)
}

// TestKeepaliveDisabled checks that a negative PingInterval starts no
// goroutine.
func TestKeepaliveDisabled(t *testing.T) {
	leakCheck(t)
	srv := newRawServer(t, nil)
	s := mustDial(t, srv.url(), &DialOptions{PingInterval: -1})
	defer s.Close()
	srv.accept(t).CloseRead(t.Context()) // answers the close handshake
	buf := make([]byte, 1<<20)
	if stacks := string(buf[:runtime.Stack(buf, true)]); strings.Contains(stacks, "transport.(*Stream).keepalive") {
		t.Errorf("keepalive goroutine running with PingInterval < 0:\n%s", stacks)
	}
}

// A line waiting for its next frame holds no read buffer: the frame's comes from the pool the
// Streams share and goes back after it, whatever its size.
func TestNoReadBufferBetweenFrames(t *testing.T) {
	l := newPipeLine(t, DialOptions{PingInterval: -1}, nil)
	l.server.CloseRead(context.Background()) // the server answers the device's close
	defer l.device.Close()
	pads := []int{100, 20 << 10, 100}
	go func() {
		for _, pad := range pads {
			frame := `{"jsonrpc":"2.0","method":"note","params":{"pad":"` + strings.Repeat("x", pad) + `"}}`
			if err := l.server.Write(context.Background(), websocket.MessageText, []byte(frame)); err != nil {
				t.Errorf("server write: %v", err)
				return
			}
		}
	}()
	for _, pad := range pads {
		m, err := l.device.Read()
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Params) != pad+len(`{"pad":""}`) {
			t.Errorf("params of %d bytes, want the frame's", len(m.Params))
		}
		if l.device.rbuf != nil {
			t.Errorf("after a frame of %d bytes: a read buffer of %d bytes held", pad, l.device.rbuf.Cap())
		}
	}
}
