//go:build !devicectl_omit_serve

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/devicectl/devicectl/internal/config"
	devhw "github.com/devicectl/devicectl/internal/hardware"
	"github.com/devicectl/devicectl/internal/simdevice"
	"github.com/devicectl/devicectl/internal/testing/mcpclient"
	"github.com/devicectl/devicectl/internal/testing/mcpinspector"
	"github.com/devicectl/devicectl/internal/testing/serveproc"
	"github.com/devicectl/devicectl/internal/testing/servetest"
)

// devicectl mcp as a host launches it: MCP on its stdin and stdout, passed on to serve's /mcp
// with the token from --token-file.
func TestMCPCommand(t *testing.T) {
	addr, tokenFile := startAgent(t, config.Defaults(), "tok")

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr bytes.Buffer
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	exited := make(chan int, 1)
	go func() {
		defer outW.Close()
		exited <- execute(ctx, []string{"mcp", "--server", "http://" + addr, "--token-file", tokenFile}, inR, outW, &stderr)
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "test"}, nil).Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(res.Tools, func(tool *mcp.Tool) bool { return tool.Name == "calculate" }) {
		t.Errorf("tools/list through devicectl mcp lacks calculate: %d tools", len(res.Tools))
	}
	cs.Close() // closes its stdin: the command ends
	if code := <-exited; code != exitOK {
		t.Errorf("devicectl mcp exited %d: %s", code, stderr.String())
	}
}

// An MCP host that launches devicectl mcp, configured as the README shows (mcpServers, command
// and args): the MCP Inspector 0.15.0's CLI (scripts/mcp-inspector.sh installs it) drives the
// real binary, which passes it on to serve with the token. Opt in with DEVICECTL_MCP_INSPECTOR=1
// (internal/testing/mcpinspector).
func TestMCPCommandInspector(t *testing.T) {
	cli := mcpinspector.Find(t)
	bin := serveproc.Build(t)

	const mac = "02-00-00-00-00-31"
	c := config.Defaults()
	c.Agent.DeviceAliases = map[string]string{mac: "robot"}
	addr, tokenFile := startAgent(t, c, "inspector-token")
	// A session of our own first, to know when serve's MCP server lists the device's tools.
	cs, changed := mcpclient.Connect(t, "http://"+addr+"/mcp", "inspector-token")
	volumes := make(chan int, 16)
	dc := config.Defaults()
	dc.Device.StateDir = t.TempDir()
	dev, err := simdevice.Start(t.Context(), dc, "ws://"+addr+"/", mac, "test", &devhw.SimHooks{OnVolume: func(p int) { volumes <- p }}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	mcpclient.WaitListed(t, cs, changed, "robot__amplify_volume")

	hosts := filepath.Join(t.TempDir(), "hosts.json")
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"robot": map[string]any{
		"command": bin, "args": []string{"mcp", "--server", "http://" + addr, "--token-file", tokenFile},
	}}})
	if err := os.WriteFile(hosts, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	inspect := func(args ...string) string {
		t.Helper()
		return string(cli.Run(t, append([]string{"--config", hosts, "--server", "robot"}, args...)...))
	}
	if out := inspect("--method", "tools/list"); !strings.Contains(out, `"name": "robot__amplify_volume"`) {
		t.Error("the Inspector's tools/list through devicectl mcp lacks robot__amplify_volume")
	}
	if out := inspect("--method", "tools/call", "--tool-name", "robot__amplify_volume", "--tool-arg", "level=30"); !strings.Contains(out, `{\"status\":\"success\"}`) {
		t.Error("tools/call robot__amplify_volume level=30 through devicectl mcp did not succeed")
	}
	select {
	case v := <-volumes:
		if v != 30 {
			t.Errorf("the sim speaker was set to %d, want 30", v)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the sim speaker did not move")
	}
	if out := inspect("--method", "tools/call", "--tool-name", "robot__amplify_volume", "--tool-arg", "level=150"); !strings.Contains(out, `"isError": true`) || !strings.Contains(out, "150 is greater than the maximum 100") {
		t.Error("tools/call robot__amplify_volume level=150 through devicectl mcp is not a tool error naming the maximum")
	}
}

func TestMCPCommandUsage(t *testing.T) {
	var stderr bytes.Buffer
	if code := execute(t.Context(), []string{"mcp"}, strings.NewReader(""), io.Discard, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "--server is required") {
		t.Errorf("devicectl mcp without --server: exit %d, %q", code, stderr.String())
	}
	stderr.Reset()
	if code := execute(t.Context(), []string{"mcp", "--server", "http://127.0.0.1:1"}, strings.NewReader(""), io.Discard, &stderr); code != exitError || !strings.Contains(stderr.String(), "http://127.0.0.1:1/mcp") {
		t.Errorf("devicectl mcp with nothing at --server: exit %d, %q", code, stderr.String())
	}
}

// startAgent runs the agent server as serve builds it on c, with a token file holding token, on a
// loopback port until the test ends. It returns the address and the token file.
func startAgent(t *testing.T, c *config.Config, token string) (addr, tokenFile string) {
	t.Helper()
	c.Agent.TokenFile = servetest.WriteToken(t, token)
	_, addr = servetest.Start(t, c)
	return addr, c.Agent.TokenFile
}
