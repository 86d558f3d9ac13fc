//go:build !devicectl_omit_serve || !devicectl_omit_sim

// Package servetest runs the agent server as `devicectl serve` builds it (server.New) on a
// loopback port, for the tests of what talks to it: the MCP server, devicectl's commands, the
// swarm.
package servetest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/devicectl/devicectl/agent/server"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/testing/loopback"
)

// Start serves c on 127.0.0.1, on a port of its own, until the test ends, with a state
// directory of the test's when c names none; it returns the server and its address.
func Start(t testing.TB, c *config.Config) (*server.Server, string) {
	t.Helper()
	if c.Agent.StateDir == "" {
		c.Agent.StateDir = t.TempDir()
	}
	srv, err := server.New(&server.Options{Config: c, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := loopback.Serve(t, srv)
	return srv, addr
}

// WriteToken writes token to a file of mode 0600, as agent.token_file reads it, and returns its
// path.
func WriteToken(t testing.TB, token string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "agent.token")
	if err := os.WriteFile(p, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
