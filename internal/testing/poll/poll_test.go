package poll

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/devicectl/devicectl/internal/testing/leakcheck"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m)) }

// A file another process writes is seen moments after it is written.
func TestUntilSeesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "written")
	time.AfterFunc(20*time.Millisecond, func() { os.WriteFile(path, nil, 0o600) })
	start := time.Now()
	Until(t, "the file", func() bool { _, err := os.Stat(path); return err == nil })
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the wait took %v for a file written after 20ms", took)
	}
}

func TestWithinGivesUp(t *testing.T) {
	var looks atomic.Int32
	if within(30*time.Millisecond, func() bool { looks.Add(1); return false }) {
		t.Error("within reported a condition that never held")
	}
	if looks.Load() < 2 {
		t.Errorf("cond looked at %d times in 30ms, want it looked at again", looks.Load())
	}
}
