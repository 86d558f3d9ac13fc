package serveproc

import (
	"os"
	"testing"

	"github.com/devicectl/devicectl/internal/testing/leakcheck"
)

// TestMain fails the package if a test leaves goroutines behind, and removes the binary Build
// built.
func TestMain(m *testing.M) {
	code := leakcheck.Main(m)
	Remove()
	os.Exit(code)
}
