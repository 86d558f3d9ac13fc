//go:build !devicectl_omit_serve || !devicectl_omit_sim

package mcpserver_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/devicectl/devicectl/agent/mcpserver"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/testing/mcpclient"
	"github.com/devicectl/devicectl/internal/testing/servetest"
)

// The stdio form: Proxy serves serve's tools on a transport of its own (in memory here, stdio in
// `devicectl mcp`), with the token serve wants; calls and their errors pass through, and a
// device that goes is a list_changed on the proxy's side too.
func TestProxy(t *testing.T) {
	const token = "proxy-token"
	_, addr := startServe(t, func(c *config.Config) {
		c.Agent.TokenFile = servetest.WriteToken(t, token)
		c.Agent.DeviceAliases = map[string]string{deskMAC: "desk"}
	})
	desk := startSim(t, addr, deskMAC)

	hostSide, proxySide := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	proxied := make(chan error, 1)
	go func() {
		proxied <- mcpserver.Proxy(ctx, proxySide, &mcpserver.ProxyOptions{URL: "http://" + addr, Token: token, Version: "test"})
	}()
	changed := make(chan struct{}, 64)
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "test"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := client.Connect(ctx, hostSide, nil)
	if err != nil {
		t.Fatal(err)
	}

	mcpclient.WaitListed(t, cs, changed, "desk__amplify_volume", "calculate")
	res := call(t, cs, "desk__amplify_volume", map[string]any{"level": 42})
	if res.IsError {
		t.Errorf("desk__amplify_volume 42: %s", text(res))
	}
	desk.waitVolume(t, 42)
	res = call(t, cs, "desk__amplify_volume", map[string]any{"level": -1})
	if !res.IsError || !strings.Contains(text(res), "-1 is less than the minimum 0") {
		t.Errorf("desk__amplify_volume -1: isError %v %q, want the detail", res.IsError, text(res))
	}
	callCtx, callCancel := context.WithTimeout(t.Context(), wait)
	defer callCancel()
	if _, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "nothing", Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), `unknown tool "nothing"`) {
		t.Errorf("tools/call nothing: %v, want a JSON-RPC error naming the unknown tool", err)
	}

	drain(changed)
	if err := desk.Close(); err != nil {
		t.Fatal(err)
	}
	waitChanged(t, changed)
	deadline := time.Now().Add(wait)
	for slices.Contains(mcpclient.ToolNames(t, cs), "desk__amplify_volume") { // the proxy re-lists, then tells
		if time.Now().After(deadline) {
			t.Fatal("the gone device's tools are still listed through the proxy")
		}
		waitChanged(t, changed)
	}

	// The host closing its side ends the proxy without an error.
	cs.Close()
	select {
	case err := <-proxied:
		if err != nil {
			t.Errorf("Proxy after the host left: %v", err)
		}
	case <-time.After(wait):
		t.Fatal("Proxy did not return after the host closed its session")
	}
}

// Proxy names the server it cannot reach or that refuses its token, and serve stopping ends it
// with ErrUpstreamGone.
func TestProxyErrors(t *testing.T) {
	srv, addr := startServe(t, func(c *config.Config) { c.Agent.TokenFile = servetest.WriteToken(t, "right") })
	_, proxySide := mcp.NewInMemoryTransports()
	err := mcpserver.Proxy(t.Context(), proxySide, &mcpserver.ProxyOptions{URL: "http://" + addr, Token: "wrong"})
	if err == nil || !strings.Contains(err.Error(), "http://"+addr+"/mcp") {
		t.Errorf("Proxy with a wrong token: %v, want an error naming the endpoint", err)
	}
	if err := mcpserver.Proxy(t.Context(), proxySide, &mcpserver.ProxyOptions{URL: "ws://" + addr}); err == nil || !strings.Contains(err.Error(), "want http://HOST:PORT") {
		t.Errorf("Proxy with a ws:// URL: %v", err)
	}

	hostSide, proxySide := mcp.NewInMemoryTransports()
	proxied := make(chan error, 1)
	go func() {
		proxied <- mcpserver.Proxy(t.Context(), proxySide, &mcpserver.ProxyOptions{URL: "http://" + addr + "/mcp", Token: "right"})
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "test"}, nil).Connect(t.Context(), hostSide, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	mcpclient.ToolNames(t, cs) // the proxy is serving
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-proxied:
		if !errors.Is(err, mcpserver.ErrUpstreamGone) {
			t.Errorf("Proxy after serve stopped: %v, want ErrUpstreamGone", err)
		}
	case <-time.After(wait): // the client retries the event stream twice before it gives up
		t.Fatal("Proxy did not return after serve stopped")
	}
}
