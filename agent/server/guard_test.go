//go:build !devicectl_omit_serve || !devicectl_omit_sim

package server

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/testing/httpdo"
)

// guardRequest is one request a web page (or a client) makes to the server.
type guardRequest struct {
	method, path string
	host         string // "" is the server's address
	ctype, body  string
	headers      []string // "Name: value"
}

// send makes r to the server at addr and returns the status and body.
func (r guardRequest) send(t *testing.T, addr string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(r.method, "http://"+addr+r.path, strings.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	if r.host != "" {
		req.Host = r.host
	}
	if r.ctype != "" {
		req.Header.Set("Content-Type", r.ctype)
	}
	for _, h := range r.headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Add(k, v)
	}
	return httpdo.Do(t, req)
}

const (
	seedSendBody   = `{"jsonrpc":"2.0","id":"1","method":"tasks/send","params":{"id":"task-guard","message":{"role":"user","parts":[{"type":"text","text":"记住我喜欢科技"}]}}}`
	seedStreamBody = `{"jsonrpc":"2.0","id":"2","method":"tasks/send/stream","params":{"id":"task-guard-stream","message":{"role":"user","parts":[{"type":"text","text":"记住我喜欢科技"}]}}}`
	a2aSendBody    = `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-guard","role":"ROLE_USER","parts":[{"text":"记住我喜欢科技"}]}}}`
	a2aListBody    = `{"jsonrpc":"2.0","id":2,"method":"ListTasks","params":{}}`
	a2a03SendBody  = `{"jsonrpc":"2.0","id":3,"method":"message/send","params":{"message":{"kind":"message","messageId":"m-guard-03","role":"user","parts":[{"kind":"text","text":"记住我喜欢科技"}]}}}`
	mcpInitBody    = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"evil","version":"1"}}}`
	webSayBody     = `{"text":"记住我喜欢科技"}`
)

// TestGuardRoutes drives each route family of the real server as an attacking page would: a
// "simple" cross-origin request (text/plain, which a browser sends without asking), the same
// from a page whose DNS name was rebound to 127.0.0.1 (same origin, foreign Host), and a JSON
// body from a foreign origin. Each must be refused, and no turn may have run.
func TestGuardRoutes(t *testing.T) {
	c := testConfig(t)
	c.Agent.Web = true
	_, addr := startServer(t, c)
	_, port, _ := net.SplitHostPort(addr)
	rebind := "rebind.evil.example:" + port
	evil := "Origin: http://127.0.0.1:1" // a page on another loopback port
	type route struct {
		path, body string
	}
	routes := []route{
		{"/tasks/send", seedSendBody},
		{"/tasks/send/stream", seedStreamBody},
		{"/a2a", a2aSendBody},
		{"/a2a", a2aListBody},
		{"/a2a/v0.3", a2a03SendBody},
		{"/mcp", mcpInitBody},
		{"/web/say", webSayBody},
	}
	for _, rt := range routes {
		for _, c := range []struct {
			name string
			r    guardRequest
			want int
		}{
			{"text/plain from another origin", guardRequest{method: "POST", path: rt.path, ctype: "text/plain", body: rt.body, headers: []string{evil, "Sec-Fetch-Site: same-site"}}, http.StatusForbidden},
			{"text/plain from another origin, old browser", guardRequest{method: "POST", path: rt.path, ctype: "text/plain", body: rt.body, headers: []string{evil}}, http.StatusForbidden},
			{"JSON from another origin", guardRequest{method: "POST", path: rt.path, ctype: "application/json", body: rt.body, headers: []string{evil, "Accept: application/json, text/event-stream"}}, http.StatusForbidden},
			{"same origin, rebound name", guardRequest{method: "POST", path: rt.path, host: rebind, ctype: "application/json", body: rt.body, headers: []string{"Origin: http://" + rebind, "Sec-Fetch-Site: same-origin", "Accept: application/json, text/event-stream"}}, http.StatusMisdirectedRequest},
			{"text/plain, same origin", guardRequest{method: "POST", path: rt.path, ctype: "text/plain", body: rt.body, headers: []string{"Origin: http://" + addr}}, http.StatusUnsupportedMediaType},
			{"form, no origin", guardRequest{method: "POST", path: rt.path, ctype: "application/x-www-form-urlencoded", body: rt.body}, http.StatusUnsupportedMediaType},
		} {
			if code, body := c.r.send(t, addr); code != c.want {
				t.Errorf("%s %s: %d %q, want %d", rt.path, c.name, code, clipText(body), c.want)
			}
		}
	}
	// The rebound page reading tasks and the page: refused too, GET or not.
	for _, path := range []string{"/tasks/task-guard", "/", "/web/events", "/.well-known/agent-card.json", "/agent-card"} {
		r := guardRequest{method: "GET", path: path, host: rebind, headers: []string{"Origin: http://" + rebind}}
		if code, body := r.send(t, addr); code != http.StatusMisdirectedRequest {
			t.Errorf("GET %s with Host %s: %d %q, want 421", path, rebind, code, clipText(body))
		}
	}
	// MCP: a page may not even open the session's event stream.
	if code, body := (guardRequest{method: "GET", path: "/mcp", headers: []string{evil, "Accept: text/event-stream"}}).send(t, addr); code != http.StatusForbidden {
		t.Errorf("GET /mcp from another origin: %d %q, want 403", code, clipText(body))
	}

	// Nothing ran: no task, no memory.
	code, body := (guardRequest{method: "POST", path: "/a2a", ctype: "application/json", body: a2aListBody}).send(t, addr)
	if code != http.StatusOK || strings.Contains(body, "TASK_STATE") {
		t.Errorf("ListTasks after the attacks: %d %s, want no task", code, clipText(body))
	}
	for _, id := range []string{"task-guard", "task-guard-stream"} {
		if code, _ := (guardRequest{method: "GET", path: "/tasks/" + id}).send(t, addr); code == http.StatusOK {
			t.Errorf("task %s exists: an attack ran a turn", id)
		}
	}

	// Clients that are no browser keep working: no Origin, JSON.
	if code, body := (guardRequest{method: "POST", path: "/tasks/send", ctype: "application/json", body: seedSendBody}).send(t, addr); code != http.StatusOK || !strings.Contains(body, `"completed"`) {
		t.Errorf("POST /tasks/send from a client: %d %s", code, clipText(body))
	}
	if code, body := (guardRequest{method: "POST", path: "/mcp", ctype: "application/json", body: mcpInitBody, headers: []string{"Accept: application/json, text/event-stream"}}).send(t, addr); code != http.StatusOK {
		t.Errorf("POST /mcp initialize from a client: %d %s", code, clipText(body))
	}
	// And the page itself, by the name localhost.
	if code, body := (guardRequest{method: "POST", path: "/web/say", host: "localhost:" + port, ctype: "application/json", body: `{"text":"3*(4+5)"}`, headers: []string{"Origin: http://localhost:" + port, "Sec-Fetch-Site: same-origin"}}).send(t, addr); code/100 != 2 {
		t.Errorf("POST /web/say from the page: %d %s", code, clipText(body))
	}
}

// A page may not open a device line: not from another origin, not from a rebound name whose
// Origin matches its Host. A device (no Origin) may, by any of the server's names.
func TestGuardDeviceWebSocket(t *testing.T) {
	srv, addr := startServer(t, testConfig(t))
	_, port, _ := net.SplitHostPort(addr)
	rebind := "rebind.evil.example:" + port
	for _, c := range []struct {
		name, host, origin string
		want               int
	}{
		{"rebound name, matching Origin", rebind, "http://" + rebind, http.StatusMisdirectedRequest},
		{"another loopback port", "", "http://127.0.0.1:1", http.StatusForbidden},
		{"device by localhost", "localhost:" + port, "", http.StatusSwitchingProtocols},
		{"device by address", "", "", http.StatusSwitchingProtocols},
	} {
		o := &websocket.DialOptions{Host: c.host, HTTPHeader: http.Header{}}
		if c.origin != "" {
			o.HTTPHeader.Set("Origin", c.origin)
		}
		conn, resp, err := websocket.Dial(waitCtx(t), "ws://"+addr+"/any/path", o)
		got := 0
		if resp != nil {
			got = resp.StatusCode
		}
		if conn != nil {
			conn.CloseNow()
		}
		if got != c.want {
			t.Errorf("%s: WebSocket handshake %d (%v), want %d", c.name, got, err, c.want)
		}
	}
	if n := len(srv.Hub.Devices()); n != 0 {
		t.Errorf("%d devices registered", n)
	}
}

// The cards name the server by config, whatever Host a request says.
func TestGuardCardURL(t *testing.T) {
	for _, c := range []struct {
		name, publicURL, host string
		want                  func(addr string) string
	}{
		{"listen address", "", "localhost", func(addr string) string { return "http://" + addr + "/a2a" }},
		{"public URL", "https://robot.example/", "robot.example", func(string) string { return "https://robot.example/a2a" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig(t)
			cfg.Agent.Listen = "localhost:8765" // as serve's config says; the test serves elsewhere
			cfg.Agent.PublicURL = c.publicURL
			_, addr := startServer(t, cfg)
			_, port, _ := net.SplitHostPort(addr)
			code, body := (guardRequest{method: "GET", path: "/.well-known/agent-card.json", host: c.host + ":" + port}).send(t, addr)
			var card struct {
				SupportedInterfaces []struct {
					URL string `json:"url"`
				} `json:"supportedInterfaces"`
				URL string `json:"url"` // 0.3
			}
			if err := json.Unmarshal([]byte(body), &card); err != nil || code != http.StatusOK || len(card.SupportedInterfaces) == 0 {
				t.Fatalf("the agent card: %d %s (%v)", code, clipText(body), err)
			}
			want := c.want(addr)
			if card.SupportedInterfaces[0].URL != want || card.URL != want+"/v0.3" {
				t.Errorf("the card's URLs %q and %q, want %q and %q", card.SupportedInterfaces[0].URL, card.URL, want, want+"/v0.3")
			}
			_, body = (guardRequest{method: "GET", path: "/agent-card", host: c.host + ":" + port}).send(t, addr)
			if wantSeed := strings.TrimSuffix(want, "/a2a"); !strings.Contains(body, `"url":"`+wantSeed+`"`) {
				t.Errorf("the seed card %s, want url %q", clipText(body), wantSeed)
			}
		})
	}
}

// Behind a reverse proxy that rewrites Host to the listen address, the page at agent.public_url
// still calls the server, and answers name the public URL; other pages still may not.
func TestGuardBehindProxy(t *testing.T) {
	cfg := testConfig(t)
	cfg.Agent.PublicURL = "https://robot.example/"
	_, addr := startServer(t, cfg)
	for _, c := range []struct {
		origin string
		want   int
	}{
		{"https://robot.example", http.StatusOK},
		{"https://robot.example:443", http.StatusOK},
		{"http://robot.example", http.StatusForbidden},
		{"https://evil.example", http.StatusForbidden},
	} {
		r := guardRequest{method: "POST", path: "/a2a", ctype: "application/json", body: a2aListBody, headers: []string{"Origin: " + c.origin}}
		if code, body := r.send(t, addr); code != c.want {
			t.Errorf("POST /a2a from %s through the proxy: %d %s, want %d", c.origin, code, clipText(body), c.want)
		}
	}
	if code, _ := (guardRequest{method: "GET", path: "/", host: "robot.example"}).send(t, addr); code == http.StatusMisdirectedRequest {
		t.Error("Host robot.example (agent.public_url's) is refused")
	}
}

// A bad agent.allowed_hosts or agent.allowed_origins is an error naming the key.
func TestGuardConfigErrors(t *testing.T) {
	for _, c := range []struct {
		edit func(c *config.Config)
		key  string
	}{
		{func(c *config.Config) { c.Agent.AllowedHosts = []string{"http://robot.lan/"} }, "agent.allowed_hosts"},
		{func(c *config.Config) { c.Agent.AllowedOrigins = []string{"dashboard.example"} }, "agent.allowed_origins"},
	} {
		cfg := testConfig(t)
		c.edit(cfg)
		srv, err := New(&Options{Config: cfg, Logger: slog.New(slog.DiscardHandler)})
		var ce *config.Error
		if !errors.As(err, &ce) || ce.Key != c.key {
			if srv != nil {
				srv.Close()
			}
			t.Errorf("New: %v, want a *config.Error on %s", err, c.key)
		}
	}
}

func clipText(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}
