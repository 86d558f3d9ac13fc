package modroot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/internal/testing/leakcheck"
)

// TestMain fails the package if a test leaves goroutines behind.
func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m)) }

// From three levels down, Dir finds this module's go.mod; outside any module it is an error.
func TestDir(t *testing.T) {
	root, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil || !strings.HasPrefix(string(mod), "module github.com/devicectl/devicectl\n") {
		t.Fatalf("go.mod at %s: %.40q, %v", root, mod, err)
	}
	if rel, _ := filepath.Rel(root, "."); rel == "." {
		t.Errorf("Dir = %s, the test's own directory", root)
	}
	t.Chdir(t.TempDir())
	if dir, err := Dir(); err == nil {
		t.Errorf("outside the module, Dir = %s", dir)
	}
}
