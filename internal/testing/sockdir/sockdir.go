package sockdir

import (
	"os"
	"testing"
)

// New makes a directory with a short path under the system's temporary directory and removes it
// when the test ends.
func New(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "sock")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
