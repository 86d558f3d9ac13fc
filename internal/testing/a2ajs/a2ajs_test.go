package a2ajs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/devicectl/devicectl/internal/testing/modroot"
)

// The runner Need returns runs check.mjs where it is kept in the tree.
func TestCheckScriptIsThere(t *testing.T) {
	root, err := modroot.Dir()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(clientsDir), "check.mjs")); err != nil {
		t.Fatal(err)
	}
}
