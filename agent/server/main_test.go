//go:build !devicectl_omit_serve || !devicectl_omit_sim

package server

import (
	"os"
	"testing"

	"github.com/devicectl/devicectl/internal/testing/leakcheck"
	"github.com/devicectl/devicectl/internal/testing/pgtest"
	"github.com/devicectl/devicectl/internal/testing/serveproc"
)

// TestMain fails the package if a test leaves goroutines behind, stops the PostgreSQL server a
// test started and removes the devicectl binary a benchmark built.
func TestMain(m *testing.M) {
	code := pgtest.Main(m, leakcheck.Main)
	serveproc.Remove()
	os.Exit(code)
}
