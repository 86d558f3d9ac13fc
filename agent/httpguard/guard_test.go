package httpguard_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/agent/httpguard"
)

// newGuard is the agent server's guard as agent/server builds it, with a fixed set of names.
func newGuard(t *testing.T, log io.Writer) *httpguard.Guard {
	t.Helper()
	if log == nil {
		log = io.Discard
	}
	g, err := httpguard.New(&httpguard.Options{
		Hosts:    []string{"robot.lan", "proxy.example:443", "[fd00::1]:8765"},
		Origins:  []string{"https://Dashboard.example", "http://127.0.0.1:3000"},
		Token:    "s3cret",
		Strict:   func(r *http.Request) bool { return r.URL.Path == "/mcp" },
		HostsKey: "agent.allowed_hosts", OriginsKey: "agent.allowed_origins",
		Logger: slog.New(slog.NewTextHandler(log, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

const jsonBody = `{"jsonrpc":"2.0","id":1,"method":"ListTasks"}`

// req is one request to the guard: method, path, Host and headers as "Name: value" lines.
func req(method, path, host string, headers ...string) *http.Request {
	var body io.Reader
	if method == http.MethodPost || method == http.MethodPut {
		body = strings.NewReader(jsonBody)
	}
	r := httptest.NewRequest(method, path, body)
	r.Host = host
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		r.Header.Add(k, v)
	}
	return r
}

func TestCheck(t *testing.T) {
	const (
		ct      = "Content-Type: application/json"
		ws1     = "Connection: Upgrade"
		ws2     = "Upgrade: websocket"
		evil    = "Origin: http://evil.example"
		cross   = "Sec-Fetch-Site: cross-site"
		own     = "Origin: http://127.0.0.1:8765"
		sameOri = "Sec-Fetch-Site: same-origin"
	)
	cases := []struct {
		name string
		r    *http.Request
		want int // 0: let through
	}{
		// Hosts.
		{"loopback IPv4", req("POST", "/a2a", "127.0.0.1:8765", ct), 0},
		{"loopback 127/8", req("POST", "/a2a", "127.9.9.9:8765", ct), 0},
		{"loopback IPv6", req("POST", "/a2a", "[::1]:8765", ct), 0},
		{"localhost", req("POST", "/a2a", "localhost:8765", ct), 0},
		{"localhost upper case, final dot", req("POST", "/a2a", "LocalHost.:8765", ct), 0},
		{"under .localhost", req("POST", "/a2a", "robot.localhost:8765", ct), 0},
		{"LAN IP literal", req("POST", "/a2a", "192.168.1.20:8765", ct), 0},
		{"IPv6 literal", req("GET", "/", "[fd00::2]:8765"), 0},
		{"no Host (HTTP/1.0)", req("POST", "/a2a", "", ct), 0},
		{"allowed name, any port", req("POST", "/a2a", "ROBOT.lan:9999", ct), 0},
		{"allowed name, no port", req("GET", "/", "robot.lan"), 0},
		{"allowed name:port", req("POST", "/a2a", "proxy.example:443", ct), 0},
		{"allowed name, other port", req("POST", "/a2a", "proxy.example:8443", ct), 421},
		{"allowed name:port without port", req("POST", "/a2a", "proxy.example", ct), 421},
		{"rebinding POST", req("POST", "/tasks/send", "rebind.evil.example:8765", ct), 421},
		{"rebinding GET", req("GET", "/tasks/abc", "rebind.evil.example:8765"), 421},
		{"rebinding page", req("GET", "/", "rebind.evil.example:8765"), 421},
		{"rebinding WebSocket, matching Origin", req("GET", "/", "rebind.evil.example:8765", ws1, ws2, "Origin: http://rebind.evil.example:8765"), 421},
		{"rebinding with the token", req("POST", "/a2a", "rebind.evil.example:8765", ct, "Authorization: Bearer s3cret"), 421},
		{"localhost as a suffix only", req("POST", "/a2a", "evillocalhost:8765", ct), 421},
		{"allowed name as a suffix only", req("POST", "/a2a", "xrobot.lan:8765", ct), 421},
		{"decimal IP trick is a name", req("POST", "/a2a", "2130706433:8765", ct), 421},

		// Origins.
		{"no Origin: curl, devices, SDKs", req("POST", "/a2a", "127.0.0.1:8765", ct), 0},
		{"same origin", req("POST", "/web/say", "127.0.0.1:8765", ct, own), 0},
		{"same origin by Sec-Fetch-Site", req("POST", "/web/say", "127.0.0.1:8765", ct, own, sameOri), 0},
		{"typed address (Sec-Fetch-Site none)", req("POST", "/web/say", "127.0.0.1:8765", ct, "Sec-Fetch-Site: none"), 0},
		{"foreign Origin", req("POST", "/a2a", "127.0.0.1:8765", ct, evil), 403},
		{"foreign Origin text/plain", req("POST", "/tasks/send", "127.0.0.1:8765", "Content-Type: text/plain", evil), 403},
		{"other loopback port", req("POST", "/a2a", "127.0.0.1:8765", ct, "Origin: http://127.0.0.1:9000"), 403},
		{"same site, other port (Sec-Fetch-Site)", req("POST", "/a2a", "127.0.0.1:8765", ct, "Origin: http://127.0.0.1:9000", "Sec-Fetch-Site: same-site"), 403},
		{"cross-site without Origin", req("POST", "/a2a", "127.0.0.1:8765", ct, cross), 403},
		{"cross-site beats a matching Origin", req("POST", "/a2a", "127.0.0.1:8765", ct, own, cross), 403},
		{"null Origin", req("POST", "/a2a", "127.0.0.1:8765", ct, "Origin: null"), 403},
		{"two Origins", req("POST", "/a2a", "127.0.0.1:8765", ct, own, own), 403},
		{"allowed origin", req("POST", "/a2a", "127.0.0.1:8765", ct, "Origin: https://dashboard.example", cross), 0},
		{"allowed origin, default port written", req("POST", "/a2a", "127.0.0.1:8765", ct, "Origin: https://dashboard.example:443"), 0},
		{"allowed origin, other scheme", req("POST", "/a2a", "127.0.0.1:8765", ct, "Origin: http://dashboard.example"), 403},
		{"allowed loopback origin", req("POST", "/a2a", "127.0.0.1:8765", ct, "Origin: http://127.0.0.1:3000"), 0},
		{"foreign GET passes (CORS keeps the answer)", req("GET", "/tasks/abc", "127.0.0.1:8765", evil), 0},
		{"foreign GET of /mcp (its stream)", req("GET", "/mcp", "127.0.0.1:8765", evil), 403},
		{"foreign DELETE of /mcp", req("DELETE", "/mcp", "127.0.0.1:8765", evil), 403},
		{"foreign WebSocket", req("GET", "/", "127.0.0.1:8765", ws1, ws2, evil), 403},
		{"foreign WebSocket, any path", req("GET", "/ws/device", "127.0.0.1:8765", ws1, ws2, "Origin: http://127.0.0.1:9000"), 403},
		{"same-origin WebSocket", req("GET", "/", "127.0.0.1:8765", ws1, ws2, own), 0},
		{"device WebSocket (no Origin)", req("GET", "/", "192.168.1.20:8765", ws1, ws2), 0},
		{"token exempts from Origin", req("POST", "/a2a", "127.0.0.1:8765", ct, evil, "Authorization: Bearer s3cret"), 0},
		{"wrong token does not", req("POST", "/a2a", "127.0.0.1:8765", ct, evil, "Authorization: Bearer s3cre"), 403},
		{"Origin behind a proxy without port", req("POST", "/a2a", "proxy.example:443", ct, "Origin: https://proxy.example"), 0},

		// Content types.
		{"text/plain", req("POST", "/tasks/send", "127.0.0.1:8765", "Content-Type: text/plain"), 415},
		{"form", req("POST", "/a2a", "127.0.0.1:8765", "Content-Type: application/x-www-form-urlencoded"), 415},
		{"multipart", req("POST", "/a2a/v0.3", "127.0.0.1:8765", "Content-Type: multipart/form-data; boundary=x"), 415},
		{"no Content-Type", req("POST", "/mcp", "127.0.0.1:8765"), 415},
		{"json, charset", req("POST", "/mcp", "127.0.0.1:8765", "Content-Type: application/json; charset=UTF-8"), 0},
		{"json, other charset", req("POST", "/mcp", "127.0.0.1:8765", "Content-Type: application/json; charset=latin1"), 415},
		{"two Content-Types", req("POST", "/mcp", "127.0.0.1:8765", ct, "Content-Type: text/plain"), 415},
		{"json with the token still json only", req("POST", "/a2a", "127.0.0.1:8765", "Content-Type: text/plain", "Authorization: Bearer s3cret"), 415},
		{"POST without a body", req("DELETE", "/mcp", "127.0.0.1:8765"), 0},

		// Preflights.
		{"preflight, allowed origin", req("OPTIONS", "/a2a", "127.0.0.1:8765", "Origin: https://dashboard.example", "Access-Control-Request-Method: POST"), 0},
		{"preflight, foreign origin", req("OPTIONS", "/a2a", "127.0.0.1:8765", evil, "Access-Control-Request-Method: POST"), 403},
		{"preflight, rebinding", req("OPTIONS", "/a2a", "rebind.evil.example:8765", "Origin: https://dashboard.example", "Access-Control-Request-Method: POST"), 421},
	}
	g := newGuard(t, nil)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ref := g.Check(c.r)
			got := 0
			if ref != nil {
				got = ref.Status
			}
			if got != c.want {
				t.Errorf("%s %s Host %q %v: status %d (%v), want %d", c.r.Method, c.r.URL.Path, c.r.Host, c.r.Header, got, ref, c.want)
			}
		})
	}
}

// TestHandler checks what a refused client is told and what is logged, and the CORS answers.
func TestHandler(t *testing.T) {
	var log bytes.Buffer
	g := newGuard(t, &log)
	served := 0
	h := g.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served++ }))

	cases := []struct {
		r        *http.Request
		status   int
		body     []string // in the answer
		header   map[string]string
		logLines int
	}{
		{req("POST", "/tasks/send", "rebind.evil.example:8765", "Content-Type: application/json"), 421,
			[]string{`Host "rebind.evil.example:8765"`, "add rebind.evil.example to agent.allowed_hosts"}, nil, 1},
		{req("POST", "/a2a", "127.0.0.1:8765", "Content-Type: application/json", "Origin: http://evil.example"), 403,
			[]string{`"http://evil.example"`, "agent.allowed_origins"}, nil, 1},
		{req("POST", "/a2a", "127.0.0.1:8765", "Content-Type: text/plain"), 415,
			[]string{"application/json", `"text/plain"`}, nil, 1},
		{req("OPTIONS", "/mcp", "127.0.0.1:8765", "Origin: https://dashboard.example", "Access-Control-Request-Method: POST",
			"Access-Control-Request-Headers: content-type, authorization, mcp-session-id"), 204, nil,
			map[string]string{
				"Access-Control-Allow-Origin":   "https://dashboard.example",
				"Access-Control-Allow-Methods":  "GET, POST, DELETE, OPTIONS",
				"Access-Control-Allow-Headers":  "content-type, authorization, mcp-session-id",
				"Access-Control-Expose-Headers": "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate",
			}, 0},
		{req("OPTIONS", "/mcp", "127.0.0.1:8765", "Origin: https://dashboard.example", "Access-Control-Request-Method: POST",
			"Access-Control-Request-Headers: x\r\nevil: 1"), 204, nil,
			map[string]string{"Access-Control-Allow-Origin": "https://dashboard.example", "Access-Control-Allow-Headers": ""}, 0},
		{req("POST", "/a2a", "127.0.0.1:8765", "Content-Type: application/json", "Origin: https://dashboard.example"), 200, nil,
			map[string]string{"Access-Control-Allow-Origin": "https://dashboard.example", "Vary": "Origin"}, 0},
		{req("POST", "/a2a", "127.0.0.1:8765", "Content-Type: application/json", "Origin: http://127.0.0.1:8765"), 200, nil,
			map[string]string{"Access-Control-Allow-Origin": ""}, 0},
	}
	wantServed := 0
	for _, c := range cases {
		log.Reset()
		w := httptest.NewRecorder()
		h.ServeHTTP(w, c.r)
		if w.Code != c.status {
			t.Errorf("%s %s %v: %d %q, want %d", c.r.Method, c.r.URL.Path, c.r.Header, w.Code, w.Body, c.status)
		}
		if c.status == 200 {
			wantServed++
		}
		for _, s := range c.body {
			if !strings.Contains(w.Body.String(), s) {
				t.Errorf("%s %s: answer %q lacks %q", c.r.Method, c.r.URL.Path, w.Body, s)
			}
		}
		for k, v := range c.header {
			if got := w.Header().Get(k); got != v {
				t.Errorf("%s %s: %s %q, want %q", c.r.Method, c.r.URL.Path, k, got, v)
			}
		}
		if n := strings.Count(log.String(), "refused request"); n != c.logLines {
			t.Errorf("%s %s: %d log lines, want %d:\n%s", c.r.Method, c.r.URL.Path, n, c.logLines, log.String())
		}
	}
	if served != wantServed {
		t.Errorf("the handler behind served %d requests, want %d", served, wantServed)
	}
}

func TestNewErrors(t *testing.T) {
	for _, o := range []httpguard.Options{
		{Hosts: []string{""}},
		{Hosts: []string{"http://robot.lan"}},
		{Origins: []string{"dashboard.example"}},
		{Origins: []string{"https://dashboard.example/app"}},
		{Origins: []string{"ftp://dashboard.example"}},
		{Origins: []string{"null"}},
	} {
		_, err := httpguard.New(&httpguard.Options{Hosts: o.Hosts, Origins: o.Origins, HostsKey: "agent.allowed_hosts", OriginsKey: "agent.allowed_origins"})
		if err == nil {
			t.Errorf("New(%+v): no error", o)
			continue
		}
		key := "agent.allowed_hosts"
		if o.Origins != nil {
			key = "agent.allowed_origins"
		}
		if !strings.Contains(err.Error(), key) {
			t.Errorf("New(%+v): %v does not name %s", o, err, key)
		}
	}
}

func TestMachineNames(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"robot", []string{"robot", "robot.local"}},
		{"Robot.corp.example.", []string{"robot.corp.example", "robot", "robot.local"}},
		{"robot.local", []string{"robot.local", "robot"}},
		{"", nil},
		{"bad/name", nil},
	} {
		if got := httpguard.MachineNames(c.in); !slices.Equal(got, c.want) {
			t.Errorf("MachineNames(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
