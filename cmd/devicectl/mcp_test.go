//go:build !devicectl_omit_serve

package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/devicectl/devicectl/internal/agentd"
	"github.com/devicectl/devicectl/internal/config"
)

// devicectl mcp as a host launches it: MCP on its stdin and stdout, passed on to serve's /mcp
// with the token from --token-file.
func TestMCPCommand(t *testing.T) {
	c := config.Defaults()
	c.Agent.StateDir = t.TempDir()
	tokenFile := filepath.Join(t.TempDir(), "agent.token")
	if err := os.WriteFile(tokenFile, []byte("tok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.Agent.TokenFile = tokenFile
	srv, err := agentd.New(&agentd.Options{Config: c, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		if err := errors.Join(srv.Close(), <-served); err != nil {
			t.Error(err)
		}
	}()

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr bytes.Buffer
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	exited := make(chan int, 1)
	go func() {
		defer outW.Close()
		exited <- execute(ctx, []string{"mcp", "--server", "http://" + ln.Addr().String(), "--token-file", tokenFile}, inR, outW, &stderr)
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
