package opentoolhttp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/devicectl/devicectl/tools/opentoolhttp"
)

const testDoc = `{"opentool":"1.0.0","info":{"title":"arm","version":"1.0.0"},"functions":[{"name":"count","description":"counts"}]}`

// TestClientAgainstHandler: the two sides of this package agree on every
// endpoint, with and without a key.
func TestClientAgainstHandler(t *testing.T) {
	leakCheck(t)
	for _, key := range []string{"", "device-key"} {
		t.Run("key="+key, func(t *testing.T) {
			opts := &opentoolhttp.HandlerOptions{
				Version: "1.2.3",
				Load:    func(context.Context) (json.RawMessage, error) { return json.RawMessage(testDoc), nil },
				Call:    counter(),
			}
			if key != "" {
				opts.APIKeys = []string{key}
			}
			srv := serve(t, opts)
			c := newClient(t, srv.URL, &opentoolhttp.ClientOptions{APIKey: key})
			ctx := testContext(t)

			if v, err := c.Version(ctx); err != nil || v != "1.2.3" {
				t.Errorf("Version = %q, %v; want 1.2.3", v, err)
			}
			if doc, err := c.Load(ctx); err != nil || string(doc) != testDoc {
				t.Errorf("Load = %s, %v; want %s", doc, err, testDoc)
			}
			for i, params := range []json.RawMessage{nil, json.RawMessage(`null`), json.RawMessage(` {} `)} {
				res, err := c.Call(ctx, "count", params)
				if want := fmt.Sprintf(`{"count":%d}`, i+1); err != nil || string(res) != want {
					t.Errorf("Call(count, %s) = %s, %v; want %s", params, res, err, want)
				}
			}
			res, err := c.Call(ctx, "echo", json.RawMessage(`{"text":"<héllo>","n":[1,2]}`))
			if want := `{"text":"<héllo>","n":[1,2]}`; err != nil || string(res) != want {
				t.Errorf("Call(echo) = %s, %v; want %s", res, err, want)
			}
			_, err = c.Call(ctx, "fail", nil)
			var ce *opentoolhttp.ClientError
			if !errors.As(err, &ce) || !errors.Is(err, opentoolhttp.ErrCall) || ce.Code != -32000 || ce.Message != "the motor stalled" {
				t.Errorf("Call(fail) = %v (%#v), want ErrCall -32000 %q", err, ce, "the motor stalled")
			}
		})
	}
}

func TestClientLoadNoDocument(t *testing.T) {
	leakCheck(t)
	for _, body := range []string{
		`{}`,
		` { } `,
		`null`,
		`{"code":404,"message":"Json Parser NOT implement"}`, // the SDK servers' "no document"
	} {
		srv := serveFunc(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) })
		c := newClient(t, srv.URL, nil)
		doc, err := c.Load(testContext(t))
		if doc != nil || err != nil {
			t.Errorf("server answering %s: Load = %s, %v; want nil, nil", body, doc, err)
		}
	}
	// And the handler without a document.
	c := newClient(t, serve(t, nil).URL, nil)
	if doc, err := c.Load(testContext(t)); doc != nil || err != nil {
		t.Errorf("handler without Load: Load = %s, %v; want nil, nil", doc, err)
	}
}

// TestNewClientURL: the forms of a server's address people write, and the
// path each one leads to.
func TestNewClientURL(t *testing.T) {
	leakCheck(t)
	var mu sync.Mutex
	var path string
	srv := serveFunc(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		path = r.URL.Path
		mu.Unlock()
		io.WriteString(w, `{"version":"1.0.0"}`)
	})
	for _, tc := range []struct{ base, want string }{
		{srv.URL, "/opentool/version"},
		{srv.URL + "/", "/opentool/version"},
		{srv.URL + "/opentool", "/opentool/version"},
		{srv.URL + "/opentool/", "/opentool/version"},
		{srv.URL + "/robot1/", "/robot1/opentool/version"},
		{srv.URL + "/robot1/opentool//", "/robot1/opentool/version"},
		{strings.Replace(srv.URL, "http://", "HTTP://", 1), "/opentool/version"},
	} {
		c := newClient(t, tc.base, nil)
		if _, err := c.Version(testContext(t)); err != nil {
			t.Errorf("NewClient(%q).Version: %v", tc.base, err)
			continue
		}
		mu.Lock()
		if path != tc.want {
			t.Errorf("NewClient(%q) asked %s, want %s", tc.base, path, tc.want)
		}
		mu.Unlock()
	}
}

func TestNewClientRejects(t *testing.T) {
	for _, tc := range []struct {
		base string
		opts *opentoolhttp.ClientOptions
		want string
	}{
		{"10.0.0.5:9627", nil, `"10.0.0.5:9627" must start with http:// or https://`},
		{"admin:hunter2@10.0.0.5:9627", nil, `"…@10.0.0.5:9627" must start with http:// or https://`},
		{"http://10.0.0.5", &opentoolhttp.ClientOptions{UserAgent: "arm\n"}, "UserAgent \"arm\\n\" holds a control character"},
		{"ws://10.0.0.5:9627", nil, "must start with http:// or https://"},
		{"ftp://10.0.0.5", nil, "must start with http:// or https://"},
		{"http://", nil, "has no host"},
		{"http:///opentool", nil, "has no host"},
		{"http://[::1", nil, "invalid base URL"},
		{"http://admin:hunter2@10.0.0.5:9627", nil, "holds credentials"},
		{"http://10.0.0.5:9627/?x=1", nil, "query or a fragment"},
		{"http://10.0.0.5:9627/#top", nil, "query or a fragment"},
		{"http://10.0.0.5", &opentoolhttp.ClientOptions{APIKey: "hunter2\r\nX: y"}, "APIKey holds a space or control character"},
		{"http://10.0.0.5", &opentoolhttp.ClientOptions{MaxResponse: -1}, "MaxResponse must not be negative"},
	} {
		_, err := opentoolhttp.NewClient(tc.base, tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewClient(%q) = %v, want an error containing %q", tc.base, err, tc.want)
		} else if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("NewClient(%q) = %v: the error shows a secret", tc.base, err)
		}
	}
}

// echoID returns a handler that answers /call with tmpl, its ID replaced
// by the request's id, as JSON.
func echoID(t *testing.T, status int, tmpl string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req struct{ ID json.RawMessage }
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Errorf("the client sent a body that is not JSON: %v", err)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, strings.ReplaceAll(tmpl, "ID", string(req.ID)))
	}
}

func status(code int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

// TestClientErrors: each way a server can fail, the kind it is reported as,
// and a message a person reading a device log understands. In the wanted
// messages SERVER stands for the server's URL.
func TestClientErrors(t *testing.T) {
	leakCheck(t)
	const key = "k3y-Secret"
	for _, tc := range []struct {
		name    string
		server  http.HandlerFunc
		op      string // version, load or call
		kind    error
		status  int
		code    int64
		message string // the ClientError's Message, exactly, when not ""
		text    string // err.Error(), exactly; SERVER stands for the URL
	}{
		{
			name: "401", server: status(401, "no"), op: "call", kind: opentoolhttp.ErrUnauthorized, status: 401,
			text: `opentool SERVER: unauthorized (401): check the API key`,
		},
		{
			name: "403", server: status(403, "no"), op: "version", kind: opentoolhttp.ErrUnauthorized, status: 403,
			text: `opentool SERVER: unauthorized (403): check the API key`,
		},
		{
			name: "404", server: http.NotFound, op: "load", kind: opentoolhttp.ErrUnreachable, status: 404,
			text: `opentool SERVER: not reachable: HTTP 404 for load: check that the OpenTool server runs at this address`,
		},
		{
			name: "empty body", server: status(200, ""), op: "call", kind: opentoolhttp.ErrResponseNull, status: 200,
			text: `opentool SERVER: call "count": response is null: the body is empty`,
		},
		{
			name: "null", server: status(200, "null\n"), op: "call", kind: opentoolhttp.ErrResponseNull, status: 200,
			text: `opentool SERVER: call "count": response is null: the body is JSON null`,
		},
		{
			name: "neither result nor error", server: status(200, `{"jsonrpc":"2.0","id":"x"}`), op: "call", kind: opentoolhttp.ErrResponseNull, status: 200,
			text: `opentool SERVER: call "count": response is null: the answer has neither a result nor an error: {"jsonrpc":"2.0","id":"x"}`,
		},
		{
			name: "result and error null", server: status(200, `{"jsonrpc":"2.0","result":null,"error":null,"id":"x"}`), op: "call", kind: opentoolhttp.ErrErrorNull, status: 200,
			text: `opentool SERVER: call "count": error is null but there is no result: {"jsonrpc":"2.0","result":null,"error":null,"id":"x"}`,
		},
		{
			name: "error null, no result", server: echoID(t, 200, `{"jsonrpc":"2.0","error":null,"id":ID}`), op: "call", kind: opentoolhttp.ErrErrorNull, status: 200,
		},
		{
			name: "result null, no error", server: echoID(t, 200, `{"jsonrpc":"2.0","result":null,"id":ID}`), op: "call", kind: opentoolhttp.ErrErrorNull, status: 200,
		},
		{
			name:   "error object",
			server: echoID(t, 200, `{"jsonrpc":"2.0","result":{},"error":{"code":500,"message":"Exception: arm\nis busy","data":{"retry":1}},"id":ID}`),
			op:     "call", kind: opentoolhttp.ErrCall, status: 200, code: 500, message: "Exception: arm\nis busy",
			text: `opentool SERVER: call "count" failed (code 500): Exception: arm is busy`,
		},
		{
			name:   "error object with an empty id (Dart SDK server)",
			server: status(200, `{"jsonrpc":"2.0","result":{},"error":{"code":500,"message":"FormatException"},"id":""}`),
			op:     "call", kind: opentoolhttp.ErrCall, status: 200, code: 500, message: "FormatException",
		},
		{
			name:   "error object with a null id",
			server: status(200, `{"jsonrpc":"2.0","result":null,"error":{"code":-32700,"message":"Parse error"},"id":null}`),
			op:     "call", kind: opentoolhttp.ErrCall, status: 200, code: -32700, message: "Parse error",
		},
		{
			name:   "error object with a float code and no message",
			server: echoID(t, 200, `{"jsonrpc":"2.0","error":{"code":500.0},"id":ID}`),
			op:     "call", kind: opentoolhttp.ErrCall, status: 200, code: 500,
			text: `opentool SERVER: call "count" failed (code 500): the server gave no message`,
		},
		{
			name:   "error string",
			server: echoID(t, 200, `{"jsonrpc":"2.0","error":"tool not found","id":ID}`),
			op:     "call", kind: opentoolhttp.ErrCall, status: 200, message: "tool not found",
			text: `opentool SERVER: call "count" failed: tool not found`,
		},
		{
			name:   "error message holding the key",
			server: echoID(t, 200, `{"jsonrpc":"2.0","error":{"code":1,"message":"bad key k3y-Secret"},"id":ID}`),
			op:     "call", kind: opentoolhttp.ErrCall, status: 200, code: 1, message: "bad key [API key]",
		},
		{
			name:   "another id",
			server: status(200, `{"jsonrpc":"2.0","result":{},"error":null,"id":"someone-else"}`),
			op:     "call", kind: opentoolhttp.ErrProtocol, status: 200,
		},
		{
			name:   "no id",
			server: status(200, `{"jsonrpc":"2.0","result":{},"error":null}`),
			op:     "call", kind: opentoolhttp.ErrProtocol, status: 200,
		},
		{
			name:   "error for another id",
			server: status(200, `{"jsonrpc":"2.0","result":{},"error":{"code":1,"message":"x"},"id":"7"}`),
			op:     "call", kind: opentoolhttp.ErrProtocol, status: 200,
		},
		{
			name:   "not JSON",
			server: status(200, "<html><body>\n<h1>Welcome to nginx!</h1></body></html>"),
			op:     "call", kind: opentoolhttp.ErrProtocol, status: 200,
			text: `opentool SERVER: call "count": protocol error: the answer is not JSON: <html><body> <h1>Welcome to nginx!</h1></body></html>`,
		},
		{
			name:   "array",
			server: status(200, `[{"jsonrpc":"2.0"}]`),
			op:     "call", kind: opentoolhttp.ErrProtocol, status: 200,
		},
		{
			name:   "HTTP 500",
			server: status(500, `{"error":"Null check operator used on a null value"}`),
			op:     "load", kind: opentoolhttp.ErrProtocol, status: 500,
			text: `opentool SERVER: load: protocol error: unexpected HTTP status 500 Internal Server Error: {"error":"Null check operator used on a null value"}`,
		},
		{
			name:   "HTTP 502 with a long body that holds the key",
			server: status(502, "Authorization: Bearer k3y-Secret\n"+strings.Repeat("x", 1000)),
			op:     "version", kind: opentoolhttp.ErrProtocol, status: 502,
			text: `opentool SERVER: version: protocol error: unexpected HTTP status 502 Bad Gateway: Authorization: Bearer [API key] ` + strings.Repeat("x", 200-len("Authorization: Bearer [API key] ")-len("…")) + "…",
		},
		{
			name:   "HTTP 413 from the handler",
			server: status(413, `{"jsonrpc":"2.0","result":{},"error":{"code":-32600,"message":"Invalid Request: the body is larger than 64 bytes"},"id":null}`),
			op:     "call", kind: opentoolhttp.ErrProtocol, status: 413,
		},
		{
			name:   "version missing",
			server: status(200, `{"name":"server"}`),
			op:     "version", kind: opentoolhttp.ErrProtocol, status: 200,
			text: `opentool SERVER: version: protocol error: the answer has no "version" string: {"name":"server"}`,
		},
		{
			name:   "version a number",
			server: status(200, `{"version":1}`),
			op:     "version", kind: opentoolhttp.ErrProtocol, status: 200,
		},
		{
			name:   "version empty body",
			server: status(200, ``),
			op:     "version", kind: opentoolhttp.ErrResponseNull, status: 200,
		},
		{
			name:   "document an array",
			server: status(200, `[]`),
			op:     "load", kind: opentoolhttp.ErrProtocol, status: 200,
			text: `opentool SERVER: load: protocol error: the document is not a JSON object: []`,
		},
		{
			name:   "document empty body",
			server: status(200, ``),
			op:     "load", kind: opentoolhttp.ErrResponseNull, status: 200,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := serveFunc(t, tc.server)
			c := newClient(t, srv.URL, &opentoolhttp.ClientOptions{APIKey: key})
			ctx := testContext(t)
			var err error
			switch tc.op {
			case "version":
				var v string
				v, err = c.Version(ctx)
				if v != "" {
					t.Errorf("Version = %q with error %v", v, err)
				}
			case "load":
				var doc json.RawMessage
				doc, err = c.Load(ctx)
				if doc != nil {
					t.Errorf("Load = %s with error %v", doc, err)
				}
			case "call":
				var res json.RawMessage
				res, err = c.Call(ctx, "count", nil)
				if res != nil {
					t.Errorf("Call = %s with error %v", res, err)
				}
			}
			var ce *opentoolhttp.ClientError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v (%T), want a *ClientError", err, err)
			}
			if !errors.Is(err, tc.kind) || ce.Kind != tc.kind {
				t.Errorf("error %q is of kind %v, want %v", err, ce.Kind, tc.kind)
			}
			if ce.Status != tc.status || ce.Code != tc.code {
				t.Errorf("error %q: status %d, code %d; want %d, %d", err, ce.Status, ce.Code, tc.status, tc.code)
			}
			if tc.message != "" && ce.Message != tc.message {
				t.Errorf("Message %q, want %q", ce.Message, tc.message)
			}
			if want := strings.ReplaceAll(tc.text, "SERVER", srv.URL); tc.text != "" && err.Error() != want {
				t.Errorf("error\n%s\nwant\n%s", err, want)
			}
			if strings.Contains(err.Error(), key) || strings.Contains(ce.Message, key) {
				t.Errorf("error %q shows the API key", err)
			}
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Errorf("error %q is not one line", err)
			}
		})
	}
}

// TestClientUnreachable: a port where nothing listens.
func TestClientUnreachable(t *testing.T) {
	leakCheck(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c := newClient(t, "http://"+addr, nil)
	for _, call := range []func(context.Context) error{
		func(ctx context.Context) error { _, err := c.Version(ctx); return err },
		func(ctx context.Context) error { _, err := c.Load(ctx); return err },
		func(ctx context.Context) error { _, err := c.Call(ctx, "count", nil); return err },
	} {
		err := call(testContext(t))
		var ce *opentoolhttp.ClientError
		if !errors.As(err, &ce) || ce.Kind != opentoolhttp.ErrUnreachable || ce.Status != 0 {
			t.Fatalf("error %v, want ErrUnreachable without a status", err)
		}
		want := regexp.MustCompile(`^opentool http://` + regexp.QuoteMeta(addr) + `: not reachable: dial tcp ` + regexp.QuoteMeta(addr) + `: .*connection refused$`)
		if !want.MatchString(err.Error()) {
			t.Errorf("error %q, want it to match %s", err, want)
		}
	}
}

// TestClientNoSuchHost: a name that cannot resolve (RFC 6761 reserves
// .invalid), whatever resolver the machine has.
func TestClientNoSuchHost(t *testing.T) {
	leakCheck(t)
	c := newClient(t, "http://opentool.invalid:9627", nil)
	_, err := c.Version(testContext(t))
	if !errors.Is(err, opentoolhttp.ErrUnreachable) || !strings.HasPrefix(err.Error(), "opentool http://opentool.invalid:9627: not reachable: ") {
		t.Errorf("error %v, want ErrUnreachable", err)
	}
}

// slowServer answers only when the client has gone or the test ends.
func slowServer(t *testing.T) string {
	release := make(chan struct{})
	srv := serveFunc(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) }) // before srv.Close, which waits for handlers
	return srv.URL
}

func TestClientTimeout(t *testing.T) {
	leakCheck(t)
	t.Run("HTTPClient.Timeout", func(t *testing.T) {
		c := newClient(t, slowServer(t), &opentoolhttp.ClientOptions{
			HTTPClient: &http.Client{Timeout: 50 * time.Millisecond},
		})
		_, err := c.Call(testContext(t), "count", nil)
		want := regexp.MustCompile(`^opentool http://[^ ]+: not reachable: no answer in time: .*Client.Timeout exceeded`)
		if !errors.Is(err, opentoolhttp.ErrUnreachable) || !want.MatchString(err.Error()) {
			t.Errorf("error %v, want ErrUnreachable matching %s", err, want)
		}
	})
	t.Run("context deadline", func(t *testing.T) {
		c := newClient(t, slowServer(t), nil)
		ctx, cancel := context.WithTimeout(testContext(t), 50*time.Millisecond)
		defer cancel()
		_, err := c.Version(ctx)
		if !errors.Is(err, opentoolhttp.ErrUnreachable) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), ": not reachable: no answer in time: ") {
			t.Errorf("error %v, want ErrUnreachable and context.DeadlineExceeded, saying there was no answer in time", err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		c := newClient(t, slowServer(t), nil)
		ctx, cancel := context.WithCancel(testContext(t))
		time.AfterFunc(50*time.Millisecond, cancel)
		_, err := c.Load(ctx)
		var ce *opentoolhttp.ClientError
		if !errors.As(err, &ce) || ce.Kind != context.Canceled || errors.Is(err, opentoolhttp.ErrUnreachable) {
			t.Fatalf("error %v, want kind context.Canceled and not ErrUnreachable: the server is not to blame", err)
		}
		if want := "opentool " + ce.Server + ": load: context canceled"; err.Error() != want {
			t.Errorf("error %q, want %q", err, want)
		}
	})
}

func TestClientMaxResponse(t *testing.T) {
	leakCheck(t)
	for _, tc := range []struct {
		name  string
		limit int64 // ClientOptions.MaxResponse
		size  int
		ok    bool
	}{
		{"at a small limit", 1024, 1024, true},
		{"over a small limit", 1024, 1025, false},
		{"at the default limit", 0, opentoolhttp.DefaultMaxResponse, true},
		{"over the default limit", 0, opentoolhttp.DefaultMaxResponse + 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A document padded with spaces to the size wanted.
			doc := `{"opentool":"1.0.0"}`
			body := doc + strings.Repeat(" ", tc.size-len(doc))
			srv := serveFunc(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) })
			c := newClient(t, srv.URL, &opentoolhttp.ClientOptions{MaxResponse: tc.limit})
			got, err := c.Load(testContext(t))
			if tc.ok {
				if err != nil || string(got) != doc {
					t.Errorf("Load = %.40s, %v; want the document", got, err)
				}
				return
			}
			limit := tc.limit
			if limit == 0 {
				limit = opentoolhttp.DefaultMaxResponse
			}
			want := fmt.Sprintf("opentool %s: load: protocol error: the answer is larger than %d bytes", srv.URL, limit)
			if !errors.Is(err, opentoolhttp.ErrProtocol) || err.Error() != want {
				t.Errorf("Load: %v\nwant %s", err, want)
			}
		})
	}
}

// TestClientRequests: what the client sends, and that each call has an id
// of its own that the server may echo as a string or as a number.
func TestClientRequests(t *testing.T) {
	leakCheck(t)
	type seen struct {
		method, path, auth, contentType, userAgent string
		body                                       map[string]json.RawMessage
	}
	var mu sync.Mutex
	var requests []seen
	asNumber := false
	srv := serveFunc(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s := seen{r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("Content-Type"), r.Header.Get("User-Agent"), nil}
		json.Unmarshal(b, &s.body)
		mu.Lock()
		requests = append(requests, s)
		number := asNumber
		mu.Unlock()
		id := string(s.body["id"])
		if number {
			id = strings.Trim(id, `"`)
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","result":{"ok":true},"error":null,"id":%s}`, id)
	})
	c := newClient(t, srv.URL, &opentoolhttp.ClientOptions{APIKey: "abc", UserAgent: "arm-agent/2"})
	ctx := testContext(t)
	for i := range 3 {
		mu.Lock()
		asNumber = i == 2
		mu.Unlock()
		if res, err := c.Call(ctx, "move", json.RawMessage(`{"x":1}`)); err != nil || string(res) != `{"ok":true}` {
			t.Fatalf("call %d = %s, %v", i, res, err)
		}
	}
	ids := map[string]bool{}
	for _, s := range requests {
		if s.method != "POST" || s.path != "/opentool/call" || s.auth != "Bearer abc" || s.contentType != "application/json" || s.userAgent != "arm-agent/2" {
			t.Errorf("request %+v", s)
		}
		if string(s.body["jsonrpc"]) != `"2.0"` || string(s.body["method"]) != `"move"` || string(s.body["params"]) != `{"x":1}` || len(s.body) != 4 {
			t.Errorf("request body %s", s.body)
		}
		id := string(s.body["id"])
		if !regexp.MustCompile(`^"[1-9][0-9]*"$`).MatchString(id) || ids[id] {
			t.Errorf("id %s: want a fresh decimal string", id)
		}
		ids[id] = true
	}
}

func TestClientCallArguments(t *testing.T) {
	leakCheck(t)
	srv := serveFunc(t, func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("a call with bad arguments reached the server")
	})
	c := newClient(t, srv.URL, nil)
	for _, tc := range []struct {
		name, params, want string
	}{
		{"", `{}`, "the function name is empty"},
		{"count", `[1]`, `call "count": params must be a JSON object, not an array`},
		{"count", `"x"`, `params must be a JSON object, not a string`},
		{"count", `{"a":`, `params are not valid JSON`},
	} {
		_, err := c.Call(testContext(t), tc.name, json.RawMessage(tc.params))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Call(%q, %s) = %v, want an error containing %q", tc.name, tc.params, err, tc.want)
		}
	}
}

// TestClientConcurrent: one client, many goroutines; run with -race.
func TestClientConcurrent(t *testing.T) {
	leakCheck(t)
	srv := serve(t, &opentoolhttp.HandlerOptions{Call: counter()})
	c := newClient(t, srv.URL, nil)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			params := json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))
			if res, err := c.Call(testContext(t), "echo", params); err != nil || string(res) != string(params) {
				t.Errorf("Call(echo, %s) = %s, %v", params, res, err)
			}
		})
	}
	wg.Wait()
}

// TestClientConnectionCut: a server that drops the connection instead of
// answering (here a Call that aborts, which the handler lets through to
// net/http) is unreachable, not a protocol error.
func TestClientConnectionCut(t *testing.T) {
	leakCheck(t)
	srv := serve(t, &opentoolhttp.HandlerOptions{
		Call: func(context.Context, string, json.RawMessage) (any, error) { panic(http.ErrAbortHandler) },
	})
	c := newClient(t, srv.URL, nil)
	_, err := c.Call(testContext(t), "count", nil)
	if !errors.Is(err, opentoolhttp.ErrUnreachable) || !strings.Contains(err.Error(), "EOF") {
		t.Errorf("error %v, want ErrUnreachable saying the connection ended (EOF)", err)
	}
}
