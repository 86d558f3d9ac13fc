//go:build !devicectl_omit_sim && !devicectl_omit_serve

package main

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/internal/testing/httpdo"
)

// sim --web is guarded as serve is: a page on another origin, or under a rebound DNS name, drives
// nothing, and the agent card names the server's own address whatever Host a request says.
func TestSimWebGuard(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	page, done := startWeb(t, ctx, "", "sim", "--web=127.0.0.1:0")
	u, err := url.Parse(page)
	if err != nil {
		t.Fatal(err)
	}
	port := u.Port()
	send := func(path, host, ctype, origin, body string) (int, string) {
		req, err := http.NewRequest("POST", page+strings.TrimPrefix(path, "/"), strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			req.Host = host
		}
		req.Header.Set("Content-Type", ctype)
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		return httpdo.Do(t, req)
	}
	const say = `{"jsonrpc":"2.0","id":"1","method":"tasks/send","params":{"id":"t-evil","message":{"role":"user","parts":[{"type":"text","text":"把音量调到90"}]}}}`
	if code, body := send("/tasks/send", "", "text/plain", "http://127.0.0.1:1", say); code != http.StatusForbidden || !strings.Contains(body, "agent.allowed_origins") {
		t.Errorf("POST /tasks/send from another origin: %d %q, want 403 naming agent.allowed_origins", code, body)
	}
	rebind := "rebind.evil.example:" + port
	if code, body := send("/tasks/send", rebind, "application/json", "http://"+rebind, say); code != http.StatusMisdirectedRequest || !strings.Contains(body, "agent.allowed_hosts") {
		t.Errorf("POST /tasks/send with Host %s: %d %q, want 421 naming agent.allowed_hosts", rebind, code, body)
	}
	if code, body := send("/web/say", "", "text/plain", "", `{"text":"把音量调到90"}`); code != http.StatusUnsupportedMediaType {
		t.Errorf("POST /web/say as text/plain: %d %q, want 415", code, body)
	}
	if code, _ := httpdo.Get(t, page+"tasks/t-evil"); code == http.StatusOK {
		t.Error("task t-evil exists: a refused request ran a turn")
	}

	req, err := http.NewRequest("GET", page+".well-known/agent-card.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "localhost:" + port
	want := `"url": "http://127.0.0.1:` + port + `/a2a"`
	if _, card := httpdo.Do(t, req); !strings.Contains(card, want) {
		t.Errorf("the agent card asked for as localhost:%s does not hold %s:\n%s", port, want, card)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("sim --web exit %d after interrupt, want 0", code)
	}
}
