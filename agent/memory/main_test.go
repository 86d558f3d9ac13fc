package memory

import (
	"os"
	"testing"

	"github.com/devicectl/devicectl/internal/testing/leakcheck"
	"github.com/devicectl/devicectl/internal/testing/pgtest"
)

func TestMain(m *testing.M) {
	code := leakcheck.Main(m)
	pgtest.Stop()
	os.Exit(code)
}
