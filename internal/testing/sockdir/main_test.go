package sockdir

import (
	"os"
	"testing"

	"github.com/devicectl/devicectl/internal/testing/leakcheck"
)

// TestMain fails the package if a test leaves goroutines behind.
func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m)) }
