package opentoolhttp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools/opentoolhttp"
)

func TestHandlerVersion(t *testing.T) {
	leakCheck(t)
	for _, tc := range []struct {
		version, want string
	}{
		{"", `{"version":"1.0.0"}`},
		{"2.3.4", `{"version":"2.3.4"}`},
	} {
		srv := serve(t, &opentoolhttp.HandlerOptions{Version: tc.version})
		a := do(t, http.MethodGet, srv.URL+"/opentool/version", nil, nil)
		if a.status != http.StatusOK || strings.TrimSpace(a.body) != tc.want {
			t.Errorf("Version %q: GET /opentool/version = %d %s, want 200 %s", tc.version, a.status, a.body, tc.want)
		}
		if ct := a.header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type = %q, want application/json", ct)
		}
	}
}

func TestHandlerLoad(t *testing.T) {
	leakCheck(t)
	const doc = `{"opentool":"1.0.0","info":{"title":"arm","version":"1.0.0"},"functions":[{"name":"count"}]}`
	for _, tc := range []struct {
		name       string
		load       func(context.Context) (json.RawMessage, error)
		wantStatus int
		wantBody   string // exact, for 200; a substring of the message otherwise
	}{
		{"no Load", nil, 200, `{}`},
		{"document", func(context.Context) (json.RawMessage, error) { return json.RawMessage(doc), nil }, 200, doc},
		{"nil document", func(context.Context) (json.RawMessage, error) { return nil, nil }, 200, `{}`},
		{"null document", func(context.Context) (json.RawMessage, error) { return json.RawMessage(" null "), nil }, 200, `{}`},
		{"invalid UTF-8", func(context.Context) (json.RawMessage, error) { return json.RawMessage("{\"t\":\"\xff\"}"), nil }, 200, "{\"t\":\"\uFFFD\"}"},
		{"error", func(context.Context) (json.RawMessage, error) { return nil, errors.New("tools not ready") }, 500, "tools not ready"},
		{"array", func(context.Context) (json.RawMessage, error) { return json.RawMessage(`[1]`), nil }, 500, "not a JSON object"},
		{"not JSON", func(context.Context) (json.RawMessage, error) { return json.RawMessage(`{"a":`), nil }, 500, "not a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := serve(t, &opentoolhttp.HandlerOptions{Load: tc.load})
			a := do(t, http.MethodGet, srv.URL+"/opentool/load", nil, nil)
			if a.status != tc.wantStatus {
				t.Fatalf("status %d, want %d (body %s)", a.status, tc.wantStatus, a.body)
			}
			if tc.wantStatus == http.StatusOK {
				if got := strings.TrimSpace(a.body); got != tc.wantBody {
					t.Errorf("body %s, want %s", got, tc.wantBody)
				}
				return
			}
			var e struct {
				Code    int
				Message string
			}
			if err := json.Unmarshal([]byte(a.body), &e); err != nil || e.Code != tc.wantStatus || !strings.Contains(e.Message, tc.wantBody) {
				t.Errorf("body %s, want {code: %d, message containing %q}", a.body, tc.wantStatus, tc.wantBody)
			}
		})
	}
}

// TestHandlerLoadPerRequest: the document can change while the device
// runs, so Load runs for every request.
func TestHandlerLoadPerRequest(t *testing.T) {
	leakCheck(t)
	var n atomic.Int64
	srv := serve(t, &opentoolhttp.HandlerOptions{Load: func(context.Context) (json.RawMessage, error) {
		return json.RawMessage(fmt.Sprintf(`{"n":%d}`, n.Add(1))), nil
	}})
	for i := 1; i <= 2; i++ {
		a := do(t, http.MethodGet, srv.URL+"/opentool/load", nil, nil)
		if got, want := strings.TrimSpace(a.body), fmt.Sprintf(`{"n":%d}`, i); got != want {
			t.Errorf("load #%d = %s, want %s", i, got, want)
		}
	}
}

func TestHandlerInvalidRequest(t *testing.T) {
	leakCheck(t)
	srv := serve(t, &opentoolhttp.HandlerOptions{Call: counter()})
	for _, tc := range []struct {
		name    string
		body    string
		code    int64
		message string // substring
		id      string // the answer's id, as JSON
		version string
	}{
		{"empty body", ``, -32700, "Parse error", `null`, "2.0"},
		{"not JSON", `{"jsonrpc":"2.0","method":`, -32700, "Parse error", `null`, "2.0"},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"method\":\"count\",\"id\":\"\xff\"}", -32700, "Parse error: the body is not valid UTF-8", `null`, "2.0"},
		{"trailing garbage", `{"jsonrpc":"2.0","method":"count","id":"1"} x`, -32700, "Parse error", `null`, "2.0"},
		{"batch", `[{"jsonrpc":"2.0","method":"count","id":"1"}]`, -32600, "batch requests are not supported", `null`, "2.0"},
		{"empty batch", `[]`, -32600, "batch requests are not supported", `null`, "2.0"},
		{"string", `"count"`, -32600, "must be a JSON object, not a string", `null`, "2.0"},
		{"number", `42`, -32600, "must be a JSON object, not a number", `null`, "2.0"},
		{"null", `null`, -32600, "must be a JSON object, not null", `null`, "2.0"},
		{"no jsonrpc", `{"method":"count","id":"1"}`, -32600, `"jsonrpc" is missing`, `"1"`, "2.0"},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","method":"count","id":"1"}`, -32600, `"jsonrpc" must be "2.0" (or "2.0.0"), not "1.0"`, `"1"`, "2.0"},
		{"jsonrpc number", `{"jsonrpc":2.0,"method":"count","id":1}`, -32600, `must be "2.0"`, `1`, "2.0"},
		{"jsonrpc null", `{"jsonrpc":null,"method":"count","id":1}`, -32600, `must be "2.0"`, `1`, "2.0"},
		{"no method", `{"jsonrpc":"2.0","params":{},"id":"1"}`, -32600, `"method" is missing`, `"1"`, "2.0"},
		{"method case", `{"jsonrpc":"2.0","Method":"count","id":"1"}`, -32600, `"method" is missing`, `"1"`, "2.0"},
		{"method number", `{"jsonrpc":"2.0","method":7,"id":"1"}`, -32600, `"method" must be a string, not a number`, `"1"`, "2.0"},
		{"method null", `{"jsonrpc":"2.0","method":null,"id":"1"}`, -32600, `"method" must be a string, not null`, `"1"`, "2.0"},
		{"method empty", `{"jsonrpc":"2.0.0","method":"","id":"1"}`, -32600, `"method" must not be empty`, `"1"`, "2.0.0"},
		{"params array", `{"jsonrpc":"2.0","method":"count","params":[1,2],"id":"1"}`, -32600, `"params" must be an object of named arguments, not an array`, `"1"`, "2.0"},
		{"params string", `{"jsonrpc":"2.0","method":"count","params":"x","id":"1"}`, -32600, `not a string`, `"1"`, "2.0"},
		{"id object", `{"jsonrpc":"2.0","method":"count","id":{"a":1}}`, -32600, "id must be a string or a number, not an object", `null`, "2.0"},
		{"id array", `{"jsonrpc":"2.0","method":"count","id":[1]}`, -32600, "not an array", `null`, "2.0"},
		{"id bool", `{"jsonrpc":"2.0","method":"count","id":true}`, -32600, "not a boolean", `null`, "2.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := postCall(t, srv, tc.body)
			if a.status != http.StatusOK {
				t.Fatalf("status %d, want 200: JSON-RPC errors travel in the body (body %s)", a.status, a.body)
			}
			r := decodeResponse(t, a.body)
			if r.Error == nil || r.Error.Code != tc.code || !strings.Contains(r.Error.Message, tc.message) {
				t.Errorf("answer %s\nwant code %d and a message containing %q", a.body, tc.code, tc.message)
			}
			if string(r.ID) != tc.id || r.JSONRPC != tc.version || string(r.Result) != `{}` {
				t.Errorf("answer %s\nwant jsonrpc %q, result {} and id %s", a.body, tc.version, tc.id)
			}
			if !strings.Contains(a.body, `"result":{}`) || !strings.Contains(a.body, `"id":`) {
				t.Errorf("answer %s lacks a member the SDK clients read", a.body)
			}
		})
	}
}

// TestHandlerIDs: whatever the client sent as id comes back as sent, so the
// client can match it; a missing id is answered with null.
func TestHandlerIDs(t *testing.T) {
	leakCheck(t)
	srv := serve(t, &opentoolhttp.HandlerOptions{Call: counter()})
	for _, tc := range []struct {
		name, id, want string
	}{
		{"string", `,"id":"call-1"`, `"call-1"`},
		{"empty string", `,"id":""`, `""`},
		{"integer", `,"id":7`, `7`},
		{"negative float", `,"id":-1.5e3`, `-1.5e3`},
		{"big integer", `,"id":123456789012345678901234567890`, `123456789012345678901234567890`},
		{"html characters", `,"id":"<a&b>"`, `"<a&b>"`},
		{"escapes", `,"id":"\u00e9\n"`, `"\u00e9\n"`},
		{"null", `,"id":null`, `null`},
		{"absent", ``, `null`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := postCall(t, srv, `{"jsonrpc":"2.0","method":"count"`+tc.id+`}`)
			r := decodeResponse(t, a.body)
			if r.Error != nil {
				t.Fatalf("answer %s, want success", a.body)
			}
			if string(r.ID) != tc.want {
				t.Errorf("id %s, want %s (answer %s)", r.ID, tc.want, a.body)
			}
		})
	}
}

// TestHandlerJSONRPCVersions: "2.0" (seed, Dart SDK) and "2.0.0"
// (TypeScript SDK) are both accepted and each gets its own back.
func TestHandlerJSONRPCVersions(t *testing.T) {
	leakCheck(t)
	srv := serve(t, &opentoolhttp.HandlerOptions{Call: counter()})
	for _, v := range []string{"2.0", "2.0.0"} {
		for _, method := range []string{"count", "fail"} {
			a := postCall(t, srv, `{"jsonrpc":"`+v+`","method":"`+method+`","params":{},"id":"1"}`)
			if r := decodeResponse(t, a.body); r.JSONRPC != v || (r.Error == nil) != (method == "count") {
				t.Errorf("jsonrpc %q, method %q: answer %s", v, method, a.body)
			}
		}
	}
}

func TestHandlerCall(t *testing.T) {
	leakCheck(t)
	type call struct {
		name   string
		params string
	}
	var got call
	record := func(f func() (any, error)) func(context.Context, string, json.RawMessage) (any, error) {
		return func(ctx context.Context, name string, params json.RawMessage) (any, error) {
			got = call{name, string(params)}
			return f()
		}
	}
	for _, tc := range []struct {
		name       string
		call       func(context.Context, string, json.RawMessage) (any, error)
		params     string // the request's params member, or none
		wantCall   call
		wantResult string // when the call succeeds
		wantError  string // the answer's error member
	}{
		{
			name:       "map result",
			call:       record(func() (any, error) { return map[string]int{"count": 3}, nil }),
			params:     `,"params":{"step":1}`,
			wantCall:   call{"tool", `{"step":1}`},
			wantResult: `{"count":3}`,
		},
		{
			name:       "absent params",
			call:       record(func() (any, error) { return json.RawMessage(`{"ok":true}`), nil }),
			wantCall:   call{"tool", `{}`},
			wantResult: `{"ok":true}`,
		},
		{
			name:       "null params",
			call:       record(func() (any, error) { return json.RawMessage(`{"ok":true}`), nil }),
			params:     `,"params":null`,
			wantCall:   call{"tool", `{}`},
			wantResult: `{"ok":true}`,
		},
		{
			name:       "nil result",
			call:       record(func() (any, error) { return nil, nil }),
			wantCall:   call{"tool", `{}`},
			wantResult: `{}`,
		},
		{
			name:       "html in result",
			call:       record(func() (any, error) { return map[string]string{"text": "<b>&</b>"}, nil }),
			wantCall:   call{"tool", `{}`},
			wantResult: `{"text":"<b>&</b>"}`,
		},
		{
			name:       "result with invalid UTF-8",
			call:       record(func() (any, error) { return json.RawMessage("{\"t\":\"a\xffb\"}"), nil }),
			wantCall:   call{"tool", `{}`},
			wantResult: "{\"t\":\"a\uFFFDb\"}",
		},
		{
			name:      "plain error",
			call:      record(func() (any, error) { return nil, errors.New("the motor stalled") }),
			wantCall:  call{"tool", `{}`},
			wantError: `{"code":-32000,"message":"the motor stalled"}`,
		},
		{
			name: "RPCError with data",
			call: record(func() (any, error) {
				return nil, &opentoolhttp.RPCError{Code: -32602, Message: "Invalid params", Data: map[string]string{"details": "level > 100"}}
			}),
			wantCall: call{"tool", `{}`},
			// The TypeScript SDK keeps only the message: the details go there too.
			wantError: `{"code":-32602,"message":"Invalid params: level > 100","data":{"details":"level > 100"}}`,
		},
		{
			name: "RPCError whose message holds the details",
			call: record(func() (any, error) {
				return nil, &opentoolhttp.RPCError{Code: -32602, Message: "Invalid params: level > 100", Data: map[string]any{"details": "level > 100", "n": 1}}
			}),
			wantCall:  call{"tool", `{}`},
			wantError: `{"code":-32602,"message":"Invalid params: level > 100","data":{"details":"level > 100","n":1}}`,
		},
		{
			name: "RPCError with data but no details",
			call: record(func() (any, error) {
				return nil, &opentoolhttp.RPCError{Code: 7, Message: "odd", Data: map[string]any{"detail": "x", "details": 3}}
			}),
			wantCall:  call{"tool", `{}`},
			wantError: `{"code":7,"message":"odd","data":{"detail":"x","details":3}}`,
		},
		{
			name: "wrapped RPCError",
			call: record(func() (any, error) {
				return nil, fmt.Errorf("arm: %w", &opentoolhttp.RPCError{Code: 409, Message: "busy"})
			}),
			wantCall:  call{"tool", `{}`},
			wantError: `{"code":409,"message":"busy"}`,
		},
		{
			name: "RPCError with data that is not JSON",
			call: record(func() (any, error) {
				return nil, &opentoolhttp.RPCError{Code: 1, Message: "odd", Data: make(chan int)}
			}),
			wantCall:  call{"tool", `{}`},
			wantError: `{"code":1,"message":"odd"}`,
		},
		{
			name:      "result that is not JSON",
			call:      record(func() (any, error) { return func() {}, nil }),
			wantCall:  call{"tool", `{}`},
			wantError: `{"code":-32603,"message":"Internal error: the result of tool could not be encoded as JSON"}`,
		},
		{
			name:      "invalid raw result",
			call:      record(func() (any, error) { return json.RawMessage(`{"a":`), nil }),
			wantCall:  call{"tool", `{}`},
			wantError: `{"code":-32603,"message":"Internal error: the result of tool could not be encoded as JSON"}`,
		},
		{
			name:      "panic",
			call:      record(func() (any, error) { panic("index out of range") }),
			wantCall:  call{"tool", `{}`},
			wantError: `{"code":-32603,"message":"Internal error: the device failed while running tool"}`,
		},
		{
			name:      "no Call",
			wantError: `{"code":-32601,"message":"Method not found: tool"}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got = call{}
			srv := serve(t, &opentoolhttp.HandlerOptions{Call: tc.call})
			a := postCall(t, srv, `{"jsonrpc":"2.0","method":"tool"`+tc.params+`,"id":"9"}`)
			if got != tc.wantCall {
				t.Errorf("Call got %+v, want %+v", got, tc.wantCall)
			}
			want := `{"jsonrpc":"2.0","result":` + tc.wantResult + `,"error":null,"id":"9"}`
			if tc.wantError != "" {
				want = `{"jsonrpc":"2.0","result":{},"error":` + tc.wantError + `,"id":"9"}`
			}
			if a.status != http.StatusOK || strings.TrimSpace(a.body) != want {
				t.Errorf("answer %d %s\nwant   200 %s", a.status, strings.TrimSpace(a.body), want)
			}
		})
	}
}

// TestHandlerCallContext: Call runs with the request's context, so a tool
// can stop when the agent goes away.
func TestHandlerCallContext(t *testing.T) {
	type key struct{}
	var value any
	var ctxErr error
	h, err := opentoolhttp.NewHandler(&opentoolhttp.HandlerOptions{
		Call: func(ctx context.Context, name string, params json.RawMessage) (any, error) {
			value, ctxErr = ctx.Value(key{}), ctx.Err()
			return nil, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.WithValue(t.Context(), key{}, "request"))
	cancel() // as if the agent had hung up
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/opentool/call", strings.NewReader(`{"jsonrpc":"2.0","method":"wait","id":1}`))
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(httptest.NewRecorder(), req)
	if value != "request" || !errors.Is(ctxErr, context.Canceled) {
		t.Errorf("Call's context had value %v and error %v, want the request's (\"request\", context.Canceled)", value, ctxErr)
	}
}

func TestHandlerAuth(t *testing.T) {
	leakCheck(t)
	srv := serve(t, &opentoolhttp.HandlerOptions{Call: counter(), APIKeys: []string{"key-one", "key-two"}})
	for _, tc := range []struct {
		name string
		auth string // "" sends no header
		ok   bool
	}{
		{"first key", "Bearer key-one", true},
		{"second key", "Bearer key-two", true},
		{"scheme in lower case", "bearer key-one", true},
		{"missing", "", false},
		{"wrong key", "Bearer key-three", false},
		{"prefix of a key", "Bearer key-on", false},
		{"key plus more", "Bearer key-one2", false},
		{"empty token", "Bearer ", false},
		{"no scheme", "key-one", false},
		{"basic", "Basic a2V5LW9uZQ==", false},
	} {
		for _, ep := range []struct{ method, path, body string }{
			{http.MethodGet, "/opentool/version", ""},
			{http.MethodGet, "/opentool/load", ""},
			{http.MethodPost, "/opentool/call", `{"jsonrpc":"2.0","method":"count","id":"1"}`},
		} {
			t.Run(tc.name+ep.path, func(t *testing.T) {
				h := http.Header{"Content-Type": {"application/json"}}
				if tc.auth != "" {
					h.Set("Authorization", tc.auth)
				}
				a := do(t, ep.method, srv.URL+ep.path, h, strings.NewReader(ep.body))
				if tc.ok {
					if a.status != http.StatusOK {
						t.Errorf("status %d, want 200 (body %s)", a.status, a.body)
					}
					return
				}
				if a.status != http.StatusUnauthorized {
					t.Fatalf("status %d, want 401 (body %s)", a.status, a.body)
				}
				if got := a.header.Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
					t.Errorf("WWW-Authenticate %q, want a Bearer challenge", got)
				}
				var e struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				}
				if err := json.Unmarshal([]byte(a.body), &e); err != nil || e.Code != 401 || !strings.Contains(e.Message, "API key") {
					t.Errorf("body %s, want a JSON {code:401, message} about the API key", a.body)
				}
			})
		}
	}
}

// TestHandlerLogsNoKey: failed and successful authentications are logged
// without the key, the one sent nor the ones configured.
func TestHandlerLogsNoKey(t *testing.T) {
	leakCheck(t)
	var logs bytes.Buffer
	srv := serve(t, &opentoolhttp.HandlerOptions{
		Call:    counter(),
		APIKeys: []string{"s3cret-key"},
		Logger:  slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	for _, auth := range []string{"Bearer s3cret-key", "Bearer s3cret-kez", "Bearer s3cret-key-longer", "s3cret-key"} {
		do(t, http.MethodPost, srv.URL+"/opentool/call", http.Header{"Authorization": {auth}},
			strings.NewReader(`{"jsonrpc":"2.0","method":"count","id":"1"}`))
	}
	out := logs.String()
	if !strings.Contains(out, "unauthorized request") || !strings.Contains(out, "component=opentoolhttp") {
		t.Errorf("logs lack the failed authentications:\n%s", out)
	}
	if strings.Contains(out, "s3cret") {
		t.Errorf("logs show a key:\n%s", out)
	}
}

func TestHandlerMethodAndPath(t *testing.T) {
	leakCheck(t)
	srv := serve(t, &opentoolhttp.HandlerOptions{Call: counter()})
	for _, tc := range []struct {
		method, path string
		status       int
		allow        string
	}{
		{http.MethodPost, "/opentool/version", 405, "GET"},
		{http.MethodHead, "/opentool/version", 405, "GET"},
		{http.MethodDelete, "/opentool/load", 405, "GET"},
		{http.MethodGet, "/opentool/call", 405, "POST"},
		{http.MethodPut, "/opentool/call", 405, "POST"},
		{http.MethodGet, "/opentool/nothing", 404, ""},
		{http.MethodGet, "/opentool/version/", 404, ""},
		{http.MethodGet, "/opentool", 404, ""},
		{http.MethodGet, "/", 404, ""},
		{http.MethodPost, "/call", 404, ""},
	} {
		t.Run(tc.method+tc.path, func(t *testing.T) {
			a := do(t, tc.method, srv.URL+tc.path, nil, nil)
			if a.status != tc.status || a.header.Get("Allow") != tc.allow {
				t.Errorf("status %d, Allow %q; want %d, %q", a.status, a.header.Get("Allow"), tc.status, tc.allow)
			}
			if tc.method == http.MethodHead {
				return // no body
			}
			var e struct{ Code int }
			if err := json.Unmarshal([]byte(a.body), &e); err != nil || e.Code != tc.status {
				t.Errorf("body %q, want JSON with code %d", a.body, tc.status)
			}
		})
	}
}

func TestHandlerMaxBody(t *testing.T) {
	leakCheck(t)
	srv := serve(t, &opentoolhttp.HandlerOptions{Call: counter(), MaxBody: 64})
	fits := `{"jsonrpc":"2.0","method":"echo","params":{"a":"1234"},"id":"1"}`
	if len(fits) != 64 {
		t.Fatalf("the fitting body is %d bytes, want 64", len(fits))
	}
	over := strings.Replace(fits, "1234", "12345", 1)
	for _, tc := range []struct {
		name   string
		body   io.Reader
		status int
	}{
		{"at the limit", strings.NewReader(fits), 200},
		{"over the limit, with Content-Length", strings.NewReader(over), 413},
		// An io.Reader that is no *strings.Reader is sent chunked: the
		// handler finds out while reading.
		{"over the limit, chunked", io.MultiReader(strings.NewReader(over)), 413},
		{"far over the limit, chunked", io.MultiReader(strings.NewReader(strings.Repeat(" ", 1<<20) + over)), 413},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := do(t, http.MethodPost, srv.URL+"/opentool/call", http.Header{"Content-Type": {"application/json"}}, tc.body)
			if a.status != tc.status {
				t.Fatalf("status %d, want %d (body %s)", a.status, tc.status, a.body)
			}
			r := decodeResponse(t, a.body)
			if tc.status == 413 {
				if r.Error == nil || r.Error.Code != -32600 || !strings.Contains(r.Error.Message, "larger than 64 bytes") {
					t.Errorf("body %s, want a JSON-RPC -32600 error about the size", a.body)
				}
			} else if r.Error != nil {
				t.Errorf("body %s, want success", a.body)
			}
		})
	}
}

func TestNewHandlerOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts opentoolhttp.HandlerOptions
		want string // error substring; "" for success
	}{
		{"zero", opentoolhttp.HandlerOptions{}, ""},
		{"negative MaxBody", opentoolhttp.HandlerOptions{MaxBody: -1}, "MaxBody must not be negative"},
		{"empty key", opentoolhttp.HandlerOptions{APIKeys: []string{"good", ""}}, "APIKeys[1] is empty"},
		{"key with space", opentoolhttp.HandlerOptions{APIKeys: []string{"secret key"}}, "APIKeys[0] holds a space"},
		{"key with newline", opentoolhttp.HandlerOptions{APIKeys: []string{"secret\n"}}, "APIKeys[0] holds a space or control character"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := opentoolhttp.NewHandler(&tc.opts)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("NewHandler: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("NewHandler: %v, want an error containing %q", err, tc.want)
			case err != nil && strings.Contains(err.Error(), "secret"):
				t.Errorf("NewHandler: %v shows the key", err)
			}
		})
	}
	if _, err := opentoolhttp.NewHandler(nil); err != nil {
		t.Errorf("NewHandler(nil): %v", err)
	}
	opts := opentoolhttp.HandlerOptions{APIKeys: []string{"k"}}
	if _, err := opentoolhttp.NewHandler(&opts); err != nil {
		t.Fatal(err)
	}
	if opts.Version != "" || opts.MaxBody != 0 || opts.Logger != nil || len(opts.APIKeys) != 1 {
		t.Errorf("NewHandler changed the caller's options: %+v", opts)
	}
}

// TestHandlerLogsPanic: a tool's panic is answered, and logged with the
// stack that shows where it came from.
func TestHandlerLogsPanic(t *testing.T) {
	leakCheck(t)
	var logs bytes.Buffer
	srv := serve(t, &opentoolhttp.HandlerOptions{
		Call:   func(context.Context, string, json.RawMessage) (any, error) { panic("index out of range") },
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	a := postCall(t, srv, `{"jsonrpc":"2.0","method":"count","id":"1"}`)
	if r := decodeResponse(t, a.body); r.Error == nil || r.Error.Code != protocol.CodeInternalError {
		t.Errorf("answer %s, want a -32603 error", a.body)
	}
	for _, want := range []string{"call panicked", "method=count", `panic="index out of range"`, "TestHandlerLogsPanic"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("logs lack %q:\n%s", want, logs.String())
		}
	}
}

// TestHandlerRefusesWebPages replays what any web page can make a browser
// send to a port on the user's machine: a "simple" cross-origin POST
// (text/plain, no preflight) and a request to a name the page's owner
// pointed at 127.0.0.1 (DNS rebinding). Without keys, none of them may run
// a tool; the SDK clients' requests still do.
func TestHandlerRefusesWebPages(t *testing.T) {
	leakCheck(t)
	var calls atomic.Int32
	srv := httptest.NewUnstartedServer(nil)
	port := strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
	h, err := opentoolhttp.NewHandler(&opentoolhttp.HandlerOptions{
		Call: func(context.Context, string, json.RawMessage) (any, error) {
			calls.Add(1)
			return map[string]string{"status": "success"}, nil
		},
		AllowedHosts: []string{"127.0.0.1:" + port, "localhost:" + port, "[::1]:" + port, "board.lan"},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = h
	srv.Start()
	t.Cleanup(srv.Close)

	const body = `{"jsonrpc":"2.0","method":"amplify_volume","params":{"level":100},"id":1}`
	for _, tc := range []struct {
		name        string
		host        string // "" sends the URL's, 127.0.0.1:port
		origin      string
		contentType string
		status      int
	}{
		{"the issue's cross-origin text/plain POST", "", "http://evil.example", "text/plain", 403},
		{"a text/plain POST without Origin", "", "", "text/plain", 415},
		{"a form POST", "", "", "application/x-www-form-urlencoded", 415},
		{"no Content-Type", "", "", "", 415},
		{"JSON in another charset", "", "", "application/json; charset=latin1", 415},
		{"JSON with another parameter", "", "", "application/json; boundary=x", 415},
		{"a foreign Origin with JSON", "", "http://evil.example", "application/json", 403},
		{"Origin of another local port", "", "http://127.0.0.1:1", "application/json", 403},
		{"Origin null", "", "null", "application/json", 403},
		{"DNS rebinding", "evil.example", "", "application/json", 421},
		{"DNS rebinding with the port", "evil.example:" + port, "http://evil.example:" + port, "text/plain", 421},
		{"DNS rebinding, a subdomain of an allowed name", "x.board.lan:" + port, "", "application/json", 421},
		{"the loopback address on another port", "127.0.0.1:1", "", "application/json", 421},
		{"SDK client", "", "", "application/json", 200},
		{"SDK client with charset", "", "", "application/json; charset=UTF-8", 200},
		{"localhost", "localhost:" + port, "", "application/json", 200},
		{"IPv6 loopback", "[::1]:" + port, "", "application/json", 200},
		{"a configured name, any port", "BOARD.lan:8443", "", "application/json", 200},
		{"a page served by this server", "", "http://localhost:" + port, "application/json", 200},
		{"a page of a configured name", "board.lan", "https://board.lan", "application/json", 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := calls.Load()
			req, err := http.NewRequestWithContext(testContext(t), http.MethodPost, srv.URL+"/opentool/call", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			ran := calls.Load() != before
			if resp.StatusCode != tc.status || ran != (tc.status == 200) {
				t.Errorf("status %d, tool ran %v (body %s); want %d, ran %v", resp.StatusCode, ran, b, tc.status, tc.status == 200)
			}
			if tc.status != 200 {
				var e struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				}
				if json.Unmarshal(b, &e) != nil || e.Code != tc.status || e.Message == "" {
					t.Errorf("body %s, want {code: %d, message: why}", b, tc.status)
				}
			}
		})
	}
}

// Without AllowedHosts any Host is served, but an Origin must still be the
// Host the request was sent to.
func TestHandlerSameOriginWithoutAllowedHosts(t *testing.T) {
	leakCheck(t)
	srv := serve(t, &opentoolhttp.HandlerOptions{Call: counter()})
	host := strings.TrimPrefix(srv.URL, "http://")
	for origin, status := range map[string]int{
		"":                        200,
		"http://" + host:          200,
		"http://evil.example":     403,
		"http://" + host + "/app": 403,
	} {
		h := http.Header{"Content-Type": {"application/json"}}
		if origin != "" {
			h.Set("Origin", origin)
		}
		a := do(t, http.MethodPost, srv.URL+"/opentool/call", h, strings.NewReader(`{"jsonrpc":"2.0","method":"count","id":1}`))
		if a.status != status {
			t.Errorf("Origin %q: status %d (%s), want %d", origin, a.status, a.body, status)
		}
	}
}

func TestHandlerBadAllowedHosts(t *testing.T) {
	for _, bad := range []string{"", "http://board.lan", "board.lan:x", "a:b:c", "board.lan/path"} {
		if _, err := opentoolhttp.NewHandler(&opentoolhttp.HandlerOptions{AllowedHosts: []string{"ok.lan", bad}}); err == nil || !strings.Contains(err.Error(), "AllowedHosts[1]") {
			t.Errorf("AllowedHosts %q: NewHandler error %v, want one naming AllowedHosts[1]", bad, err)
		}
	}
}

// A flood of refused requests must be countable as repeats of one line: the
// message stays the same whoever sends what, and the remote address and
// the reason are attributes.
func TestHandlerRefusalLogsAreConstant(t *testing.T) {
	leakCheck(t)
	var logs bytes.Buffer
	srv := serve(t, &opentoolhttp.HandlerOptions{
		Call:         counter(),
		APIKeys:      []string{"key-one"},
		AllowedHosts: []string{"127.0.0.1"},
		Logger:       slog.New(slog.NewJSONHandler(&logs, nil)),
	})
	for _, auth := range []string{"", "Bearer nope", "Basic x"} {
		do(t, http.MethodGet, srv.URL+"/opentool/version", http.Header{"Authorization": {auth}}, nil)
	}
	for _, origin := range []string{"http://evil.example", "null"} {
		do(t, http.MethodGet, srv.URL+"/opentool/version", http.Header{"Origin": {origin}}, nil)
	}
	msgs := map[string]int{}
	for line := range strings.Lines(logs.String()) {
		var rec struct {
			Msg    string `json:"msg"`
			Remote string `json:"remote"`
			Reason string `json:"reason"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if !strings.HasPrefix(rec.Remote, "127.0.0.1:") || rec.Reason == "" {
			t.Errorf("log line %s: want remote and reason attributes", line)
		}
		msgs[rec.Msg]++
	}
	if want := map[string]int{"unauthorized request": 3, "refused request": 2}; fmt.Sprint(msgs) != fmt.Sprint(want) {
		t.Errorf("log messages %v, want %v", msgs, want)
	}
}

// AnyIPHost: a server on all addresses answers to each of them, but not to
// a name.
func TestHandlerAnyIPHost(t *testing.T) {
	leakCheck(t)
	srv := serve(t, &opentoolhttp.HandlerOptions{AnyIPHost: true, AllowedHosts: []string{"localhost:1"}})
	for host, status := range map[string]int{"192.168.1.5:9627": 200, "[fe80::1]": 200, "localhost:1": 200, "evil.example:9627": 421, "localhost:2": 421} {
		req, err := http.NewRequestWithContext(testContext(t), http.MethodGet, srv.URL+"/opentool/version", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != status {
			t.Errorf("Host %s: %d, want %d", host, resp.StatusCode, status)
		}
	}
}
