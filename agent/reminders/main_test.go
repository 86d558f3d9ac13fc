package reminders

import (
	"os"
	"testing"

	"github.com/devicectl/devicectl/internal/testing/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}
