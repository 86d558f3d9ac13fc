//go:build !devicectl_omit_serve || !devicectl_omit_sim

package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/devicectl/devicectl/agent/hub/hubtest"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/testing/mcpclient"
)

func ping(t *testing.T, cs *mcp.ClientSession) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	return cs.Ping(ctx, nil)
}

// Sessions are bounded by agent.limits.mcp_sessions: a new one past it closes the session unused
// longest (its host gets 404 and may start again), so hosts that initialize and vanish cannot
// pile sessions up (29,321 initialize calls once held 350 MB), and a new host is never locked
// out by them.
func TestSessionsBounded(t *testing.T) {
	const max = 3
	_, addr := startServe(t, func(c *config.Config) { c.Agent.Limits.MCPSessions = max })
	var open []*mcp.ClientSession
	for range max {
		cs, _ := connect(t, addr, "")
		open = append(open, cs)
	}
	// The first is used again: the second is now the idlest, and the next session closes it.
	if err := ping(t, open[0]); err != nil {
		t.Fatal(err)
	}
	cs, _ := connect(t, addr, "")
	if err := ping(t, open[1]); err == nil {
		t.Errorf("the idlest session still answers after a session past agent.limits.mcp_sessions (%d) opened", max)
	}
	for i, s := range []*mcp.ClientSession{open[0], open[2], cs} {
		if err := ping(t, s); err != nil {
			t.Errorf("session %d of the %d kept: %v", i, max, err)
		}
	}
	// Many more: each opens, and only the last max still answer.
	var more []*mcp.ClientSession
	for range 4 * max {
		cs, _ := connect(t, addr, "")
		more = append(more, cs)
	}
	answering := 0
	for _, s := range append(append(open, cs), more...) {
		if ping(t, s) == nil {
			answering++
		}
	}
	if answering != max {
		t.Errorf("%d sessions answer after %d opened, want agent.limits.mcp_sessions, %d", answering, 5*max+1, max)
	}
}

// When every open session has a request running, none is idle: a new session is refused with
// 503 and a JSON-RPC error naming the limit, rather than cutting a call short.
func TestSessionsAllBusy(t *testing.T) {
	_, addr := startServe(t, func(c *config.Config) { c.Agent.Limits.MCPSessions = 1 })
	cs, changed := connect(t, addr, "")
	started := make(chan struct{}, 1)
	hold := make(chan struct{})
	attachBar(t, addr, hubtest.Tools, holding(started, hold))
	mcpclient.WaitListed(t, cs, changed, barMAC+"__get_status")
	called := make(chan *mcp.CallToolResult, 1)
	go func() { called <- call(t, cs, barMAC+"__get_status", nil) }()
	<-started

	req, err := http.NewRequest("POST", "http://"+addr+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Error struct {
			Code int
			Data struct{ Details string }
		}
	}
	json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body.Error.Data.Details, "agent.limits.mcp_sessions is 1") {
		t.Errorf("a new session with the only one busy: %s %+v, want 503 naming agent.limits.mcp_sessions", resp.Status, body)
	}
	close(hold)
	if res := <-called; res.IsError {
		t.Errorf("the running call: %s", text(res))
	}
}

// A session that sends nothing for agent.limits.mcp_session_idle is closed (it was an hour).
func TestSessionIdle(t *testing.T) {
	_, addr := startServe(t, func(c *config.Config) { c.Agent.Limits.MCPSessionIdle = 200 * time.Millisecond })
	cs, _ := connect(t, addr, "")
	done := make(chan error, 1)
	go func() { done <- cs.Wait() }()
	select {
	case <-done:
	case <-time.After(wait):
		t.Fatalf("a session idle for %s past agent.limits.mcp_session_idle (200ms) is still open", wait)
	}
}
