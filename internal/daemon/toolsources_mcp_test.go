//go:build !devicectl_omit_mcpsets

package daemon

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/devicectl/devicectl/internal/testing/peer"
	"github.com/devicectl/devicectl/internal/testing/standin"
)

// everything is the MCP reference server, as scripts/mcp-everything.sh installs it: with
// DEVICECTL_MCP_EVERYTHING=1 a missing node or install fails the test; without it the test skips.
var everything = peer.Peer{Env: "DEVICECTL_MCP_EVERYTHING", What: "server-everything", Script: "scripts/mcp-everything.sh"}

// everythingDir returns node and server-everything's entry point.
func everythingDir(t *testing.T) (node, index string) {
	t.Helper()
	everything.Need(t)
	return everything.Program(t, "node"),
		everything.File(t, "tools/mcpset/testdata/everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

// The MCP reference server as a tool set of a sim device, over stdio and over Streamable HTTP: its
// tools are registered with the prefix beside the device's own, and calls from the stand-in
// server run on it end to end.
func TestMCPEverything(t *testing.T) {
	node, index := everythingDir(t)
	for _, mode := range []string{"stdio", "http"} {
		t.Run(mode, func(t *testing.T) {
			var set string
			switch mode {
			case "stdio":
				set = fmt.Sprintf("    - name: everything\n      command: [%s, %s, stdio]\n      init_timeout: 20s\n", node, index)
			case "http":
				url := startEverythingHTTP(t, node, index)
				set = fmt.Sprintf("    - name: everything\n      url: %s\n      init_timeout: 20s\n", url)
			}
			srv := standin.Start(t, nil)
			d := startDaemon(t, standin.BaseConfig(t, srv.URL())+"toolsets:\n  mcp:\n"+set, nil)
			dev := waitTools(t, srv, "the everything tools", hasTools("amplify_volume", "everything_echo", "everything_get-sum"))
			t.Logf("mcp/registerTools (%s) declared: %s", mode, strings.Join(standin.ToolNames(dev), " "))

			if got := resultOrError(standin.Execute(t, dev, "everything_echo", `{"message":"hello from the device"}`)); !strings.Contains(got, "Echo: hello from the device") {
				t.Errorf("everything_echo = %s, want the echo", got)
			}
			if got := resultOrError(standin.Execute(t, dev, "everything_get-sum", `{"a":2,"b":40}`)); !strings.Contains(got, "42") {
				t.Errorf("everything_get-sum 2+40 = %s, want 42", got)
			}
			// The device's own checks come first: a missing argument never reaches the server.
			if r := standin.Execute(t, dev, "everything_get-sum", `{"a":2}`); r.Error == nil || r.Error.Code != -32602 {
				t.Errorf("everything_get-sum without b = %s, want -32602", resultOrError(r))
			}
			// The device's own tools still run beside them.
			if r := standin.Execute(t, dev, "amplify_volume", `{"level":35}`); r.Error != nil {
				t.Errorf("amplify_volume = %v", r.Error)
			}
			d.stop(t)
		})
	}
}

// startEverythingHTTP runs server-everything's Streamable HTTP mode on a free loopback port and
// returns its endpoint once it listens.
func startEverythingHTTP(t *testing.T, node, index string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // the server takes the port; another taking it first fails the start below
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, node, index, "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	listening := make(chan string, 1)
	read := make(chan struct{})
	t.Cleanup(func() {
		cancel()
		<-read // the pipe is read to its end before Wait closes it
		_ = cmd.Wait()
	})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			t.Log("server-everything: " + sc.Text())
			if strings.Contains(sc.Text(), "listening on port") {
				select {
				case listening <- sc.Text():
				default:
				}
			}
		}
	}()
	select {
	case <-listening:
	case <-time.After(20 * time.Second):
		t.Fatal("server-everything streamableHttp did not say it listens within 20s")
	}
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
}

// A server that never answers initialize is left out, with the reason in the log, and the device
// serves its own tools meanwhile.
func TestMCPSetDown(t *testing.T) {
	srv := standin.Start(t, nil)
	config := standin.BaseConfig(t, srv.URL()) + "toolsets:\n  mcp:\n    - name: mute\n      command: [sleep, \"600\"]\n      init_timeout: 300ms\n"
	d := startDaemon(t, config, nil)
	dev := standin.NextRegistration(t, srv)
	if r := standin.Execute(t, dev, "amplify_volume", `{"level":20}`); r.Error != nil {
		t.Errorf("amplify_volume with the MCP set down = %v", r.Error)
	}
	d.stderr.WaitFor(t, "the set's failure", func(s string) bool {
		return strings.Contains(s, "MCP server not available; retrying in the background") &&
			strings.Contains(s, "toolsets.mcp[1] mute") && strings.Contains(s, "initialize: no answer within 300ms")
	})
	for _, n := range standin.ToolNames(dev) {
		if strings.HasPrefix(n, "mute_") {
			t.Errorf("the down set's tool %s is declared", n)
		}
	}
}

// A Go MCP server over Streamable HTTP behind a bearer token: its carriable tools are declared,
// the others left out with a warning naming server and tool; a tool it adds later
// (notifications/tools/list_changed) is registered again on the live line and runs.
func TestMCPListChanged(t *testing.T) {
	const token = "mcp-token-5d1f"
	server := mcp.NewServer(&mcp.Implementation{Name: "lamp", Version: "1.0.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "on", Description: "Turn the lamp on."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "the lamp is on"}}}, nil, nil
	})
	server.AddTool(&mcp.Tool{Name: "dim.level", Description: "A dotted name.", InputSchema: map[string]any{"type": "object"}}, noop)
	server.AddTool(&mcp.Tool{Name: "remote_ref", Description: "A schema elsewhere.", InputSchema: map[string]any{
		"type": "object", "properties": map[string]any{"x": map[string]any{"$ref": "https://example.com/x.json"}},
	}}, noop)
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	tokenFile := standin.WriteFile(t, "mcp.token", token+"\n")

	srv := standin.Start(t, nil)
	config := standin.BaseConfig(t, srv.URL()) + fmt.Sprintf("toolsets:\n  mcp:\n    - name: lamp\n      url: %s\n      token_file: %s\n", hs.URL, tokenFile)
	d := startDaemon(t, config, nil)
	dev := waitTools(t, srv, "the lamp", hasTools("amplify_volume", "lamp_on"))
	for _, n := range standin.ToolNames(dev) {
		if strings.Contains(n, "dim") || strings.Contains(n, "remote_ref") {
			t.Errorf("the uncarriable tool %s is declared", n)
		}
	}
	log := d.stderr.WaitFor(t, "the warnings", func(s string) bool {
		return strings.Contains(s, `tool=dim.level`) && strings.Contains(s, `tool=remote_ref`)
	})
	for _, want := range []string{`lamp_dim.level\" does not match ^[a-zA-Z0-9_-]{1,64}$`, `cannot resolve remote schemas`} {
		if !strings.Contains(log, want) {
			t.Errorf("the log does not say %q:\n%s", want, log)
		}
	}
	if !strings.Contains(log, "toolset=\"toolsets.mcp[1] lamp\"") {
		t.Errorf("the warnings do not name the set:\n%s", log)
	}
	if got := resultOrError(standin.Execute(t, dev, "lamp_on", `{}`)); got != `"the lamp is on"` {
		t.Errorf("lamp_on = %s", got)
	}

	mcp.AddTool(server, &mcp.Tool{Name: "off", Description: "Turn the lamp off."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "the switch is stuck"}}}, nil, nil
	})
	again := waitTools(t, srv, "the lamp again", hasTools("amplify_volume", "lamp_on", "lamp_off"))
	select {
	case <-dev.Done():
		t.Error("the line closed for the new registration; want it registered again on the live line")
	default:
	}
	r := standin.Execute(t, again, "lamp_off", `{}`)
	if r.Error == nil || r.Error.Code != -32000 || !strings.Contains(r.Error.Message, "off: the switch is stuck") {
		t.Errorf("lamp_off = %s, want the server's isError as -32000 with its text", resultOrError(r))
	}
	if strings.Contains(d.stderr.String(), token) {
		t.Error("the log holds the token")
	}
}

func noop(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{}, nil
}
