package leakcheck

import (
	"os"
	"testing"
)

// TestMain fails the package if a test leaves goroutines behind, with the check under test.
func TestMain(m *testing.M) { os.Exit(Main(m)) }
