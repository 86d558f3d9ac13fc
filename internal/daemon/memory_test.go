package daemon_test

import (
	"os"
	"runtime/debug"
	"testing"

	"github.com/devicectl/devicectl/internal/daemon"
)

func TestTuneGC(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)

	t.Setenv("GOGC", "") // restores the environment when the test ends
	os.Unsetenv("GOGC")
	daemon.TuneGC()
	if got := debug.SetGCPercent(100); got != daemon.GCPercent {
		t.Errorf("GOGC unset: the GC percent is %d after TuneGC, want %d", got, daemon.GCPercent)
	}

	t.Setenv("GOGC", "100")
	daemon.TuneGC()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC=100 set: TuneGC changed the GC percent to %d", got)
	}
}
