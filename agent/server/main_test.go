//go:build !devicectl_omit_serve || !devicectl_omit_sim

package server

import (
	"os"
	"testing"

	"github.com/devicectl/devicectl/internal/testing/leakcheck"
	"github.com/devicectl/devicectl/internal/testing/pgtest"
)

// TestMain fails the package if a test leaves goroutines behind, and stops the PostgreSQL
// server a test started.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m, leakcheck.Main)) }
