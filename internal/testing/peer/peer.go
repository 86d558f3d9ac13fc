// Package peer is how a test takes in a real third-party peer that a script of the repository
// installs into the tree (the npm A2A clients, the MCP Inspector, the MCP reference server and
// conformance suite, and the node they run on): the test is skipped unless the peer's variable
// is 1, and then a missing or wrong install fails it, naming the script that installs it, so CI,
// which sets the variables, cannot pass by skipping.
package peer

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/devicectl/devicectl/internal/testing/modroot"
)

// Peer is an opt-in peer.
type Peer struct {
	Env    string // the variable that opts in: DEVICECTL_...
	What   string // what the peer is, for messages: "the MCP Inspector's CLI"
	Script string // what installs it, with its arguments: "scripts/mcp-inspector.sh"
}

// Need skips t unless p's variable is 1.
func (p Peer) Need(t testing.TB) {
	t.Helper()
	if os.Getenv(p.Env) != "1" {
		t.Skipf("set %s=1 (after %s) to run %s", p.Env, p.Script, p.What)
	}
}

// Program is the path of program on PATH; a missing one fails t.
func (p Peer) Program(t testing.TB, program string) string {
	t.Helper()
	path, err := exec.LookPath(program)
	if err != nil {
		t.Fatalf("%s=1 but %s, which %s runs on, is not on PATH: %v", p.Env, program, p.What, err)
	}
	return path
}

// File is the absolute path of rel, a slash-separated path from the module's root (or already
// absolute); a missing file fails t.
func (p Peer) File(t testing.TB, rel string) string {
	t.Helper()
	path := filepath.FromSlash(rel)
	if !filepath.IsAbs(path) {
		root, err := modroot.Dir()
		if err != nil {
			t.Fatal(err)
		}
		path = filepath.Join(root, path)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s=1 but %s is not installed (run %s): %v", p.Env, p.What, p.Script, err)
	}
	return path
}

// Version fails t unless the npm package.json at rel (as File takes it) is version want.
func (p Peer) Version(t testing.TB, rel, want string) {
	t.Helper()
	b, err := os.ReadFile(p.File(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	var meta struct{ Version string }
	if err := json.Unmarshal(b, &meta); err != nil || meta.Version != want {
		t.Fatalf("%s holds %s %q (%v), want %s (run %s)", rel, p.What, meta.Version, err, want, p.Script)
	}
}
