//go:build !devicectl_omit_serve || !devicectl_omit_sim

package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/sourcegraph/jsonrpc2"

	"github.com/devicectl/devicectl/agent/hub"
	"github.com/devicectl/devicectl/agent/hub/hubtest"
	"github.com/devicectl/devicectl/agent/mcpserver"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/testing/httpdo"
	"github.com/devicectl/devicectl/internal/testing/mcpclient"
	"github.com/devicectl/devicectl/internal/testing/servetest"
)

const (
	deskMAC = "02-00-00-00-00-01" // aliased "desk" in the tests' config
	barMAC  = "02-00-00-00-00-02" // no alias: named by its MAC
)

// The go-sdk's client against serve's /mcp with two sim devices: each device's tools are listed
// under its name with the schema it declared, the server's own tools under theirs; a control call
// moves the sim speaker; what the schema refuses is a tool error carrying the detail; a query
// waits for the device; an unknown tool is a JSON-RPC error.
func TestDevicesAsTools(t *testing.T) {
	srv, addr := startServe(t, func(c *config.Config) {
		c.Agent.DeviceAliases = map[string]string{deskMAC: "desk"}
	})
	cs, changed := connect(t, addr, "")
	desk := startSim(t, addr, deskMAC)
	bar := startSim(t, addr, barMAC)
	mcpclient.WaitListed(t, cs, changed,
		"desk__amplify_volume", "desk__set_virtual_human_expression", "desk__get_device_status",
		barMAC+"__amplify_volume", barMAC+"__get_device_status",
		"calculate", "search_web", "add_user_memory", "search_user_memories", "delete_user_memory")
	// The input schema is the one the device declared.
	dev, ok := srv.Hub.Device(deskMAC)
	if !ok {
		t.Fatal("the desk device is not registered")
	}
	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if tool.Name != "desk__amplify_volume" {
			continue
		}
		i := slices.IndexFunc(dev.Tools, func(d toolDecl) bool { return d.Name == "amplify_volume" })
		if got, want := compactJSON(t, tool.InputSchema), compactJSON(t, dev.Tools[i].Parameters); got != want {
			t.Errorf("desk__amplify_volume's input schema\n got %s\nwant %s", got, want)
		}
		if tool.Description != dev.Tools[i].Description {
			t.Errorf("description %q, want the device's %q", tool.Description, dev.Tools[i].Description)
		}
	}

	// A control tool answers success at once (seed 002); the speaker then moves.
	res := call(t, cs, "desk__amplify_volume", map[string]any{"level": 30})
	if res.IsError || text(res) != `{"status":"success"}` {
		t.Errorf("desk__amplify_volume 30: isError %v %q, want the success of a control call", res.IsError, text(res))
	}
	desk.waitVolume(t, 30)
	res = call(t, cs, barMAC+"__amplify_volume", map[string]any{"level": 55})
	if res.IsError {
		t.Errorf("%s__amplify_volume: %s", barMAC, text(res))
	}
	bar.waitVolume(t, 55)

	// Input the schema refuses never reaches the device: a tool error with the detail.
	res = call(t, cs, "desk__amplify_volume", map[string]any{"level": 150})
	if want := "desk__amplify_volume: Invalid params (-32602): arguments.level: 150 is greater than the maximum 100"; !res.IsError || text(res) != want {
		t.Errorf("desk__amplify_volume 150: isError %v %q, want a tool error naming the maximum", res.IsError, text(res))
	}
	res = call(t, cs, "desk__amplify_volume", nil)
	if !res.IsError || !strings.Contains(text(res), `arguments: missing required property "level"`) {
		t.Errorf("desk__amplify_volume without arguments: isError %v %q", res.IsError, text(res))
	}

	// A query waits for the device's answer, which is the result (and structured content).
	res = call(t, cs, "desk__get_device_status", nil)
	if res.IsError || !strings.Contains(text(res), `"volume":30`) {
		t.Errorf("desk__get_device_status: isError %v %q, want the device's status with volume 30", res.IsError, text(res))
	}
	if _, ok := res.StructuredContent.(map[string]any); !ok {
		t.Errorf("desk__get_device_status: structured content %T, want the device's object", res.StructuredContent)
	}

	// The server's own tools.
	res = call(t, cs, "calculate", map[string]any{"expression": "3*(4+5)"})
	if res.IsError || !strings.Contains(text(res), `"result":27`) {
		t.Errorf("calculate: isError %v %q", res.IsError, text(res))
	}
	res = call(t, cs, "calculate", map[string]any{"expr": "1"})
	if !res.IsError || !strings.Contains(text(res), "Invalid params") {
		t.Errorf("calculate with a wrong argument: isError %v %q, want Invalid params", res.IsError, text(res))
	}

	// A tool no one has is a protocol error.
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "desk__fly", Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), `unknown tool "desk__fly"`) {
		t.Errorf("tools/call desk.fly: %v, want a JSON-RPC error naming the unknown tool", err)
	}
}

// With agent.wait_for_control a control call waits, and the device's JSON-RPC error comes back
// as a tool error with its code, message and details.
func TestDeviceErrorIsToolError(t *testing.T) {
	_, addr := startServe(t, func(c *config.Config) { c.Agent.WaitForControl = true })
	cs, changed := connect(t, addr, "")
	attachBar(t, addr, hubtest.Tools, func(_ context.Context, tool string, input json.RawMessage) (json.RawMessage, *jsonrpc2.Error) {
		e := &jsonrpc2.Error{Code: -32000, Message: "执行失败：音量级别超出范围（0-100）。"}
		e.SetError(map[string]string{"details": "the amplifier is off"})
		return nil, e
	})
	mcpclient.WaitListed(t, cs, changed, barMAC+"__amplify_volume")
	res := call(t, cs, barMAC+"__amplify_volume", map[string]any{"level": 20})
	want := barMAC + "__amplify_volume: the device " + barMAC + " answered 执行失败：音量级别超出范围（0-100）。 (-32000): the amplifier is off"
	if !res.IsError || text(res) != want {
		t.Errorf("isError %v %q, want %q", res.IsError, text(res), want)
	}
}

// A device that goes: the session is told the tools changed, its tools leave the list, and a
// call to one of them is a tool error saying the device disconnected. A call in flight when the
// line drops ends with a tool error too.
func TestDeviceDisconnects(t *testing.T) {
	_, addr := startServe(t, func(c *config.Config) {
		c.Agent.DeviceAliases = map[string]string{"02:00:00:00:00:01": "desk"} // as written, not normalised
	})
	cs, changed := connect(t, addr, "")
	if names := mcpclient.ToolNames(t, cs); slices.ContainsFunc(names, func(n string) bool { return strings.Contains(n, mcpserver.Sep) }) {
		t.Fatalf("device tools listed before any device registered: %v", names)
	}

	desk := startSim(t, addr, deskMAC)
	waitChanged(t, changed)
	mcpclient.WaitListed(t, cs, changed, "desk__amplify_volume")
	drain(changed)

	if err := desk.Close(); err != nil {
		t.Fatal(err)
	}
	waitChanged(t, changed)
	// A list_changed of the registration may still have been on its way: the listing may take
	// one more notification to lose the tools.
	deadline := time.Now().Add(wait)
	for names := mcpclient.ToolNames(t, cs); slices.Contains(names, "desk__amplify_volume"); names = mcpclient.ToolNames(t, cs) {
		if time.Now().After(deadline) {
			t.Fatalf("after the device disconnected, tools/list still has its tools: %v", names)
		}
		waitChanged(t, changed)
	}
	res := call(t, cs, "desk__amplify_volume", map[string]any{"level": 10})
	t.Logf("a call to the gone device: %s", text(res))
	if !res.IsError || !strings.HasPrefix(text(res), "desk__amplify_volume: the device desk ("+deskMAC+") disconnected") {
		t.Errorf("a call to the gone device: isError %v %q, want a tool error saying it disconnected", res.IsError, text(res))
	}

	// A query in flight when the device's line drops.
	started := make(chan struct{}, 1)
	hold := make(chan struct{})
	defer close(hold)
	dev := attachBar(t, addr, hubtest.Tools, holding(started, hold))
	mcpclient.WaitListed(t, cs, changed, barMAC+"__get_status")
	go func() {
		<-started
		dev.Close()
	}()
	res = call(t, cs, barMAC+"__get_status", nil)
	if !res.IsError || !strings.Contains(text(res), barMAC+"__get_status: the device "+barMAC+" disconnected before it answered") {
		t.Errorf("a call whose device went mid-call: isError %v %q", res.IsError, text(res))
	}
}

// With agent.token_file set, /mcp wants the token like the rest of the HTTP API.
func TestToken(t *testing.T) {
	const token = "s3cret-token"
	_, addr := startServe(t, func(c *config.Config) { c.Agent.TokenFile = servetest.WriteToken(t, token) })
	startSim(t, addr, deskMAC)

	if _, _, err := tryConnect(t, addr, ""); err == nil {
		t.Error("an MCP session without the token was accepted")
	}
	if _, _, err := tryConnect(t, addr, "wrong"); err == nil {
		t.Error("an MCP session with a wrong token was accepted")
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+addr+"/mcp",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if code, body := httpdo.Do(t, req); code != http.StatusUnauthorized || !strings.Contains(body, "bearer token") {
		t.Errorf("initialize without a token: %d %s, want 401 naming the bearer token", code, body)
	}

	cs, changed := connect(t, addr, token)
	mcpclient.WaitListed(t, cs, changed, deskMAC+"__amplify_volume")
}

// Close ends the MCP sessions, so the server's shutdown does not wait for their event streams.
func TestCloseEndsSessions(t *testing.T) {
	srv, addr := startServe(t, nil)
	cs, _ := connect(t, addr, "")
	start := time.Now()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %s with an MCP session open", d)
	}
	done := make(chan error, 1)
	go func() { done <- cs.Wait() }()
	select {
	case <-done:
	case <-time.After(wait):
		t.Error("the client's session did not end when the server closed")
	}
}

// A device that registers again on its line with other tools: the list follows, with one
// list_changed, and the tool it dropped is an unknown tool (the device is still connected).
func TestToolsChanged(t *testing.T) {
	_, addr := startServe(t, nil)
	cs, changed := connect(t, addr, "")
	dev := attachBar(t, addr, hubtest.Tools, nil)
	mcpclient.WaitListed(t, cs, changed, barMAC+"__amplify_volume", barMAC+"__get_status")
	drain(changed)

	const only = `[{"name":"get_status","description":"Read the device's state, again.","main_type":"remote","sub_type":"query","parameters":{"type":"object","properties":{"verbose":{"type":"boolean"}}}}]`
	if _, err := dev.Register(t.Context(), barMAC, only); err != nil {
		t.Fatal(err)
	}
	// A list_changed of the first registration may still be on its way: list again on each
	// notification until the listing is the new registration's, or the wait is over.
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		dropped, desc := true, ""
		for tool, err := range cs.Tools(t.Context(), nil) {
			if err != nil {
				t.Fatal(err)
			}
			if tool.Name == barMAC+"__amplify_volume" {
				dropped = false
			}
			if tool.Name == barMAC+"__get_status" {
				desc = tool.Description
			}
		}
		if dropped && desc == "Read the device's state, again." {
			break
		}
		select {
		case <-changed:
		case <-timer.C:
			t.Fatalf("within %s: amplify_volume dropped %v, get_status's description %q; want the new registration's listing", wait, dropped, desc)
		}
	}
	res := call(t, cs, barMAC+"__get_status", map[string]any{"verbose": true})
	if res.IsError || !strings.Contains(text(res), `"verbose":true`) {
		t.Errorf("get_status with the new schema: isError %v %q", res.IsError, text(res))
	}
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: barMAC + "__amplify_volume", Arguments: map[string]any{"level": 1}}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("a tool the connected device dropped: %v, want unknown tool", err)
	}
}

// New refuses options it cannot serve, naming what is wrong.
func TestNewOptions(t *testing.T) {
	h := hub.New(nil)
	defer h.Close()
	for _, tc := range []struct {
		opts *mcpserver.Options
		want string
	}{
		{nil, "Options.Hub is nil"},
		{&mcpserver.Options{}, "Options.Hub is nil"},
		{&mcpserver.Options{Hub: h, Aliases: map[string]string{deskMAC: "my.desk"}}, `the alias "my.desk" of ` + deskMAC + " is not 1 to 32"},
		{&mcpserver.Options{Hub: h, Aliases: map[string]string{deskMAC: "my__desk"}}, `the alias "my__desk" of ` + deskMAC + " is not 1 to 32"},
		{&mcpserver.Options{Hub: h, Aliases: map[string]string{deskMAC: "desk_"}}, `the alias "desk_" of ` + deskMAC + " is not 1 to 32"},
		{&mcpserver.Options{Hub: h, Aliases: map[string]string{deskMAC: "x", "02:00:00:00:00:02": "x"}}, `the alias "x" names both ` + deskMAC + " and " + barMAC},
		{&mcpserver.Options{Hub: h, Aliases: map[string]string{"desk": "x"}}, `the alias "x" is for "desk"`},
	} {
		s, err := mcpserver.New(tc.opts)
		if err == nil {
			s.Close()
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v): %v, want an error containing %q", tc.opts, err, tc.want)
		}
	}
}

// A body that is not JSON is a JSON-RPC parse error, as the SDK answers it, and serving goes on.
func TestBadJSON(t *testing.T) {
	_, addr := startServe(t, nil)
	post := func(body string) (int, string) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		return httpdo.Do(t, req)
	}
	code, body := post(`{"jsonrpc":"2.0","id":1,"method":"initialize",`)
	t.Logf("%d %s", code, body)
	if code != http.StatusBadRequest || !strings.Contains(body, "-32700") {
		t.Errorf("a truncated body: %d %s, want 400 with a -32700 parse error", code, body)
	}
	cs, changed := connect(t, addr, "")
	mcpclient.WaitListed(t, cs, changed, "calculate")
}

// Control calls answered at once but still waiting for a silent device are bounded: past
// maxLater of them, a call is a busy tool error instead of one more goroutine and pending call.
func TestControlCallsNotWaitedForAreBounded(t *testing.T) {
	_, addr := startServe(t, nil)
	release := make(chan struct{})
	defer close(release)
	cs, changed := connect(t, addr, "")
	attachBar(t, addr, hubtest.Tools, holding(nil, release)) // a device that does not answer until the test ends
	mcpclient.WaitListed(t, cs, changed, barMAC+"__amplify_volume")
	for i := range mcpserver.MaxLater {
		if res := call(t, cs, barMAC+"__amplify_volume", map[string]any{"level": i}); res.IsError {
			t.Fatalf("control call %d: %q, want success at once", i+1, text(res))
		}
	}
	res := call(t, cs, barMAC+"__amplify_volume", map[string]any{"level": 1})
	if !res.IsError || !strings.Contains(text(res), "device busy (-32002)") {
		t.Errorf("control call %d: isError %v %q, want a busy tool error", mcpserver.MaxLater+1, res.IsError, text(res))
	}
}
