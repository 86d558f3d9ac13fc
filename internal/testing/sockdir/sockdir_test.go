package sockdir

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// New's directory is short whatever the test's name, a socket binds in it, and it goes when the
// test ends.
func TestNewHoldsASocket(t *testing.T) {
	var dir string
	t.Run(strings.Repeat("a-test-with-a-very-long-name-", 4), func(t *testing.T) {
		dir = New(t)
		if extra := len(dir) - len(os.TempDir()); extra > 24 {
			t.Errorf("New = %s: %d bytes past the temporary directory", dir, extra)
		}
		ln, err := net.Listen("unix", filepath.Join(dir, "control.sock"))
		if err != nil {
			t.Fatal(err)
		}
		ln.Close()
	})
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s is still there after the test (%v)", dir, err)
	}
}
