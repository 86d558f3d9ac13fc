package a2ajs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The clients' directory is found from any package's working directory: this one is three
// levels below go.mod.
func TestModuleRoot(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil || !strings.HasPrefix(string(mod), "module github.com/devicectl/devicectl\n") {
		t.Fatalf("go.mod at %s: %.40q, %v", root, mod, err)
	}
	if _, err := os.Stat(filepath.Join(root, "agent", "a2a", "testdata", "js", "check.mjs")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	if dir, err := moduleRoot(); err == nil {
		t.Errorf("outside the module, moduleRoot = %s", dir)
	}
}
