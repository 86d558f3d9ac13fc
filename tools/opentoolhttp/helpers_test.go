package opentoolhttp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/devicectl/devicectl/internal/testing/leakcheck"
	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools/opentoolhttp"
)

// waitTimeout bounds every wait in these tests; reaching it is a failure.
const waitTimeout = 10 * time.Second

// leakCheck fails the test if goroutines it started outlive it; call it first.
func leakCheck(t *testing.T) { leakcheck.Check(t) }

// serve starts a handler built from opts on a loopback server, closed when
// the test ends.
func serve(t *testing.T, opts *opentoolhttp.HandlerOptions) *httptest.Server {
	t.Helper()
	h, err := opentoolhttp.NewHandler(opts)
	if err != nil {
		t.Fatalf("NewHandler: %v", err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// serveFunc starts a hand-written server, for answers the handler would
// never give.
func serveFunc(t *testing.T, f http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return srv
}

// newClient returns a client whose idle connections are closed when the
// test ends.
func newClient(t *testing.T, baseURL string, opts *opentoolhttp.ClientOptions) *opentoolhttp.Client {
	t.Helper()
	c, err := opentoolhttp.NewClient(baseURL, opts)
	if err != nil {
		t.Fatalf("NewClient(%q): %v", baseURL, err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// testContext is a context that ends with the test or after waitTimeout.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	t.Cleanup(cancel)
	return ctx
}

// answer is a raw HTTP answer.
type answer struct {
	status int
	header http.Header
	body   string
}

// do sends one raw request, without keep-alive so that no connection
// outlives it, and returns the answer.
func do(t *testing.T, method, url string, header http.Header, body io.Reader) answer {
	t.Helper()
	req, err := http.NewRequestWithContext(testContext(t), method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", method, url, err)
	}
	return answer{resp.StatusCode, resp.Header, string(b)}
}

// postCall sends body to /opentool/call as the SDKs do.
func postCall(t *testing.T, srv *httptest.Server, body string) answer {
	t.Helper()
	return do(t, http.MethodPost, srv.URL+"/opentool/call",
		http.Header{"Content-Type": {"application/json"}}, strings.NewReader(body))
}

// wireResponse is a /call answer decoded only as far as the tests compare
// it; RawMessage keeps ids and results as sent.
type wireResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	Result  json.RawMessage `json:"result"`
	Error   *wireError      `json:"error"`
	ID      json.RawMessage `json:"id"`
}

type wireError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func decodeResponse(t *testing.T, body string) wireResponse {
	t.Helper()
	var r wireResponse
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("answer %q is not a JSON-RPC response: %v", body, err)
	}
	return r
}

// compact returns s without insignificant space, for comparing JSON.
func compact(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatalf("compact(%q): %v", s, err)
	}
	return b.String()
}

// counter is a Call that counts, as the SDK examples do, and fails on
// request.
func counter() func(ctx context.Context, name string, params json.RawMessage) (any, error) {
	var n atomic.Int64
	return func(ctx context.Context, name string, params json.RawMessage) (any, error) {
		switch name {
		case "count":
			return map[string]int64{"count": n.Add(1)}, nil
		case "echo":
			return params, nil
		case "fail":
			return nil, errors.New("the motor stalled")
		}
		return nil, &opentoolhttp.RPCError{Code: protocol.CodeMethodNotFound, Message: "Method not found: " + name}
	}
}
