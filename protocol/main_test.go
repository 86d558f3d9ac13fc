package protocol_test

import (
	"os"
	"testing"

	"github.com/devicectl/devicectl/internal/testing/leakcheck"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m)) }
