package mcpinspector

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/devicectl/devicectl/internal/testing/peer"
)

// Version is the Inspector the install pins.
const Version = "0.15.0"

// installDir is where scripts/mcp-inspector.sh installs the Inspector, from the module's root.
const installDir = "agent/mcpserver/testdata/inspector"

// runLimit bounds one run of the CLI: npx and node start in seconds, the call itself takes
// milliseconds.
const runLimit = 2 * time.Minute

// CLI is the installed Inspector's command-line mode.
type CLI struct {
	npx string
	dir string // the install: npx runs there, to find it without the registry
}

// inspector is the Inspector as an opt-in peer.
var inspector = peer.Peer{Env: "DEVICECTL_MCP_INSPECTOR", What: "the MCP Inspector's CLI", Script: "scripts/mcp-inspector.sh"}

// Find returns the installed Inspector. It skips t unless DEVICECTL_MCP_INSPECTOR=1, and fails t
// when npx is not on PATH or the install is missing or holds another version than Version.
func Find(t testing.TB) *CLI {
	t.Helper()
	inspector.Need(t)
	npx := inspector.Program(t, "npx")
	inspector.Version(t, installDir+"/node_modules/@modelcontextprotocol/inspector/package.json", Version)
	return &CLI{npx: npx, dir: inspector.File(t, installDir)}
}

// Run runs the Inspector's CLI with args (what follows --cli: the server, then the method and
// its arguments), logs the command and what it printed, and returns its standard output. A run
// that fails, or takes over two minutes, fails t.
func (c *CLI) Run(t testing.TB, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), runLimit)
	defer cancel()
	argv := append([]string{"--no-install", "@modelcontextprotocol/inspector", "--cli"}, args...)
	cmd := exec.CommandContext(ctx, c.npx, argv...)
	cmd.Dir = c.dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	t.Logf("$ npx %s\n%s%s", strings.Join(argv, " "), out, stderr.String())
	if err != nil {
		t.Fatalf("the Inspector failed: %v\n%s", err, stderr.String())
	}
	return out
}
