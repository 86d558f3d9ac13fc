//go:build !devicectl_omit_serve || !devicectl_omit_sim

package mcpserver_test

import (
	"os"
	"testing"

	"github.com/devicectl/devicectl/internal/testing/leakcheck"
)

// TestMain fails the package if a test leaves goroutines behind.
func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m)) }
