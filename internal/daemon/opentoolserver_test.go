package daemon

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/testing/standin"
	"github.com/devicectl/devicectl/tools/opentoolhttp"
)

// The attacks of issue 16 on a `devicectl run` with the README's own set-up (loopback, no keys):
// a web page's cross-origin text/plain POST and a DNS-rebound Host must not turn the volume up.
// The SDK clients' way still works, an unknown function is -32601, and the details of a refusal
// are in error.message for the TypeScript SDK, which reads nothing else.
func TestOpenToolServerRefusesWebPages(t *testing.T) {
	srv := standin.Start(t, nil)
	d := startDaemon(t, standin.BaseConfig(t, srv.URL())+"opentool:\n  listen: 127.0.0.1:0\n", nil)
	dev := standin.NextRegistration(t, srv)
	addr := openToolAddr(t, d, 1)
	_, port, _ := net.SplitHostPort(addr)

	post := func(host, origin, contentType, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(standin.WaitCtx(t), http.MethodPost, "http://"+addr+"/opentool/call", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		req.Header.Set("Content-Type", contentType)
		hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	loud := `{"jsonrpc":"2.0","method":"amplify_volume","params":{"level":100},"id":1}`
	for _, tc := range []struct {
		name, host, origin, contentType string
		status                          int
	}{
		{"cross-origin text/plain POST", "", "http://evil.example", "text/plain", http.StatusForbidden},
		{"text/plain POST", "", "", "text/plain", http.StatusUnsupportedMediaType},
		{"DNS rebinding", "evil.example:" + port, "", "application/json", http.StatusMisdirectedRequest},
	} {
		if status, body := post(tc.host, tc.origin, tc.contentType, loud); status != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.name, status, body, tc.status)
		}
	}
	status := standin.Execute(t, dev, "get_device_status", `{}`)
	if strings.Contains(string(*status.Result), `"volume":100`) {
		t.Fatalf("a refused request turned the volume up: %s", *status.Result)
	}
	if status, body := post("localhost:"+port, "", "application/json", `{"jsonrpc":"2.0","method":"amplify_volume","params":{"level":40},"id":2}`); status != 200 || !strings.Contains(body, `"success"`) {
		t.Errorf("an SDK client's call by localhost: %d %s, want success", status, body)
	}

	for _, tc := range []struct{ name, body, want string }{
		{"no such tool", `{"jsonrpc":"2.0.0","method":"jump","params":{},"id":"3"}`,
			`{"jsonrpc":"2.0.0","result":{},"error":{"code":-32601,"message":"Method not found: jump"},"id":"3"}`},
		{"invalid params", `{"jsonrpc":"2.0.0","method":"amplify_volume","params":{"level":300},"id":"4"}`,
			`{"jsonrpc":"2.0.0","result":{},"error":{"code":-32602,"message":"Invalid params: tool_input.level: 300 is greater than the maximum 100","data":{"details":"tool_input.level: 300 is greater than the maximum 100"}},"id":"4"}`},
	} {
		if status, body := post("", "", "application/json", tc.body); status != 200 || strings.TrimSpace(body) != tc.want {
			t.Errorf("%s:\ngot  %d %s\nwant 200 %s", tc.name, status, strings.TrimSpace(body), tc.want)
		}
	}
}

func TestOpenToolHosts(t *testing.T) {
	for _, tc := range []struct {
		listen string
		extra  []string
		want   string
		anyIP  bool
	}{
		{"127.0.0.1:9627", nil, "127.0.0.1:9627 localhost:9627 [::1]:9627", false},
		{"localhost:0", []string{"board.lan"}, "127.0.0.1:41000 localhost:41000 [::1]:41000 board.lan", false},
		{"127.0.0.2:9627", nil, "127.0.0.1:9627 localhost:9627 [::1]:9627 127.0.0.2:9627", false},
		{"192.168.1.5:9627", []string{"board.lan:8443"}, "192.168.1.5:9627 board.lan:8443", false},
		{"0.0.0.0:9627", nil, "localhost:9627", true},
		{":9627", nil, "localhost:9627", true},
	} {
		_, port, _ := net.SplitHostPort(tc.listen)
		if port == "0" {
			port = "41000"
		}
		hosts, anyIP := openToolHosts(config.OpenToolConfig{Listen: tc.listen, AllowedHosts: tc.extra}, port)
		if got := strings.Join(hosts, " "); got != tc.want || anyIP != tc.anyIP {
			t.Errorf("%s %v: hosts %q, any IP %v; want %q, %v", tc.listen, tc.extra, got, anyIP, tc.want, tc.anyIP)
		}
	}
}

// serveOpenTool starts the OpenTool server as the daemon does, with o's settings and h, and
// closes it when the test ends.
func serveOpenTool(t *testing.T, o config.OpenToolConfig, cert *tls.Certificate, h http.Handler) *openToolServer {
	t.Helper()
	o.Listen = "127.0.0.1:0"
	base := config.DefaultOpenTool()
	if o.MaxConnections == 0 {
		o.MaxConnections = base.MaxConnections
	}
	for _, p := range []*time.Duration{&o.ReadTimeout, &o.WriteTimeout, &o.IdleTimeout} {
		if *p == 0 {
			*p = time.Minute
		}
	}
	s, err := listenOpenTool(o, cert, func(string) (http.Handler, error) { return h, nil }, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.close(0) })
	return s
}

func (s *openToolServer) addr() string { return "127.0.0.1:" + s.port }

// dial opens a raw connection to s, closed when the test ends, that fails a read after
// the waits of these tests.
func dial(t *testing.T, s *openToolServer) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", s.addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return c
}

func versionHandler(t *testing.T) http.Handler {
	h, err := opentoolhttp.NewHandler(nil)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// A kept-alive connection that sends nothing more is closed after opentool.idle_timeout, so
// idle clients do not hold connections (and file descriptors) for ever.
func TestOpenToolServerIdleTimeout(t *testing.T) {
	const idle = 200 * time.Millisecond
	s := serveOpenTool(t, config.OpenToolConfig{IdleTimeout: idle}, nil, versionHandler(t))
	c := dial(t, s)
	fmt.Fprintf(c, "GET /opentool/version HTTP/1.1\r\nHost: %s\r\n\r\n", s.addr())
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	start := time.Now()
	// The server closes the idle connection: the read ends with EOF, well before the deadline.
	if n, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("idle connection: read %v, %v; want EOF once the server closes it", n, err)
	}
	if waited := time.Since(start); waited < idle/2 {
		t.Errorf("closed after %s, before the idle timeout %s", waited, idle)
	}
}

// A body sent too slowly is cut off at opentool.read_timeout: the call does not run, and the
// connection is not held.
func TestOpenToolServerSlowBody(t *testing.T) {
	const read = 300 * time.Millisecond
	var ran atomic.Int32
	h, err := opentoolhttp.NewHandler(&opentoolhttp.HandlerOptions{Call: func(context.Context, string, json.RawMessage) (any, error) {
		ran.Add(1)
		return nil, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	s := serveOpenTool(t, config.OpenToolConfig{ReadTimeout: read}, nil, h)
	c := dial(t, s)
	body := `{"jsonrpc":"2.0","method":"count","id":1}`
	start := time.Now()
	fmt.Fprintf(c, "POST /opentool/call HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", s.addr(), len(body), body[:10])
	// The rest never comes. Whatever the server answers, it must end the exchange.
	rest, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("slow body: %v after %s, want the server to close the connection", err, time.Since(start))
	}
	if ran.Load() != 0 {
		t.Errorf("the call ran on a body that never arrived")
	}
	if waited := time.Since(start); waited < read/2 {
		t.Errorf("cut after %s, before the read timeout %s (answer %q)", waited, read, rest)
	}
}

// At most opentool.max_connections are served at once: the next one waits until one closes.
func TestOpenToolServerConnectionCap(t *testing.T) {
	const limit = 2
	entered := make(chan struct{}, limit+1)
	release := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
		w.WriteHeader(http.StatusNoContent)
	})
	s := serveOpenTool(t, config.OpenToolConfig{MaxConnections: limit}, nil, h)
	var conns []net.Conn
	for range limit + 1 {
		c := dial(t, s)
		fmt.Fprintf(c, "GET /x HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", s.addr())
		conns = append(conns, c)
	}
	for range limit {
		<-entered
	}
	// The third request is in the kernel's backlog, not in the handler. No event says that it
	// stays there, so give it a moment to show up.
	select {
	case <-entered:
		t.Fatalf("%d requests were served at once, with max_connections %d", limit+1, limit)
	case <-time.After(300 * time.Millisecond):
	}
	// One answered and closed: the waiting one is served.
	release <- struct{}{}
	<-entered
	close(release)
	for i, c := range conns {
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != http.StatusNoContent {
			t.Errorf("connection %d: %v, %v; want 204", i, resp, err)
		}
	}
}

// A reload that changes only the allowed hosts keeps the listener.
func TestOpenToolServerReloadHosts(t *testing.T) {
	srv := standin.Start(t, nil)
	base := standin.BaseConfig(t, srv.URL()) + "opentool:\n  listen: 127.0.0.1:0\n"
	d := startDaemon(t, base, nil)
	standin.NextRegistration(t, srv)
	addr := openToolAddr(t, d, 1)

	get := func(hc *http.Client, url, host string) (int, error) {
		t.Helper()
		req, err := http.NewRequestWithContext(standin.WaitCtx(t), http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	plain := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	if status, err := get(plain, "http://"+addr+"/opentool/version", "board.lan"); status != http.StatusMisdirectedRequest {
		t.Errorf("Host board.lan before it is allowed: %d, %v; want 421", status, err)
	}
	d.reload(t, base+"  allowed_hosts: [board.lan]\n", "configuration reloaded")
	if status, err := get(plain, "http://"+addr+"/opentool/version", "board.lan"); status != http.StatusOK {
		t.Errorf("Host board.lan once allowed: %d, %v; want 200 on the same listener", status, err)
	}

}

// A device whose tool set is another devicectl's OpenTool server shows the other's details once,
// though they come both in the message and in data.details.
func TestOpenToolForwardedDetailsOnce(t *testing.T) {
	const details = "tool_input.level: 555 is greater than the maximum 100"
	for _, message := range []string{"Invalid params", "Invalid params: " + details} {
		h, err := opentoolhttp.NewHandler(&opentoolhttp.HandlerOptions{Call: func(context.Context, string, json.RawMessage) (any, error) {
			return nil, &opentoolhttp.RPCError{Code: -32602, Message: message, Data: map[string]string{"details": details}}
		}})
		if err != nil {
			t.Fatal(err)
		}
		s := serveOpenTool(t, config.OpenToolConfig{}, nil, h)
		set := config.DefaultOpenToolSet()
		set.URL = "http://" + s.addr()
		src, err := newOpenToolSource(0, set, "test", slog.New(slog.DiscardHandler), func(string) {})
		if err != nil {
			t.Fatal(err)
		}
		_, err = src.forward("amplify_volume")(standin.WaitCtx(t), json.RawMessage(`{"level":555}`))
		src.client.CloseIdleConnections()
		if err == nil || strings.Count(err.Error(), details) != 1 {
			t.Errorf("server message %q: forwarded error %v, want the details once", message, err)
		}
	}
}
