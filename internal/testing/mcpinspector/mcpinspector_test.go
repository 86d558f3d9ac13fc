package mcpinspector

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/devicectl/devicectl/internal/testing/modroot"
)

// The install Find looks for is the one scripts/mcp-inspector.sh makes: its package.json, found
// from this package's directory as from any other, pins Version.
func TestInstallDirPinsVersion(t *testing.T) {
	root, err := modroot.Dir()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(installDir), "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct{ Dependencies map[string]string }
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	if got := pkg.Dependencies["@modelcontextprotocol/inspector"]; got != Version {
		t.Errorf("%s/package.json pins the Inspector at %q, want %s", installDir, got, Version)
	}
}
