package gctune

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/devicectl/devicectl/internal/testing/leakcheck"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m)) }

func TestGCPercentFor(t *testing.T) {
	for _, tc := range []struct {
		live uint64
		want int
	}{
		{0, gcMaxPercent},
		{1 << 20, gcMaxPercent}, // a small serve: the most
		{gcHeadroom / 2, 200},   // the headroom over the live heap
		{gcHeadroom, 100},       // Go's default from here on
		{20 * gcHeadroom, 100},  // thousands of devices: never less than the default
		{gcHeadroom * 100 / gcMaxPercent, gcMaxPercent},
	} {
		if got := gcPercentFor(tc.live); got != tc.want {
			t.Errorf("gcPercentFor(%d) = %d, want %d", tc.live, got, tc.want)
		}
	}
}

// After a collection the tuner sets GOGC from the live heap it left.
func TestGCTuneSetsGOGC(t *testing.T) {
	old := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(old) })
	got := make(chan int, 1)
	armGCTune(100, func(percent int) bool {
		got <- percent
		return false
	})
	runtime.GC()
	var percent int
	select {
	case percent = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("no tuning within 30s of a collection")
	}
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	live, gogc := s[0].Value.Uint64(), int(s[1].Value.Uint64())
	// This test binary's live heap is a few MiB: the tuner raises GOGC from Go's default.
	if want := gcPercentFor(live); percent < want*9/10 || percent > want*11/10 || gogc != percent || percent <= 100 {
		t.Errorf("GOGC %d, the tuner says %d, for a live heap of %d bytes (want about %d, above 100)", gogc, percent, live, want)
	}
}
