// Package gctune lets a server whose allocations are mostly short-lived garbage collect less often
// while its live heap is small: after each collection it sets GOGC so that the heap may grow by a
// fixed headroom before the next one, never below Go's default. devicectl serve uses it; the
// device side runs at Go's default.
package gctune

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// In devicectl serve most of what a task allocates is garbage at once (a2a-go copies each stored
// task through encoding/gob twice) and the live heap of a serve with a hundred devices is a few
// MiB, so at Go's default (GOGC 100: collect when the heap has grown by the live heap) serve
// collects many times a second under load, for about a tenth of its CPU. The heap may grow by
// gcHeadroom between collections instead, but by no more than gcMaxPercent of
// the live heap, and never less than Go's default: the headroom is a fixed cost (about 30 MiB
// more resident under load; 27 KiB more a device at 1,000 devices), and with many thousands of
// devices the live heap is far past it and GOGC is back at 100. GOGC in the environment turns
// this off (docs/agent.md, "Memory"); the device side (run, sim) stays at Go's default.
const (
	gcHeadroom   = 32 << 20
	gcMaxPercent = 400
)

// gcPercentFor is the GOGC for a live heap of live bytes.
func gcPercentFor(live uint64) int {
	if live == 0 {
		return gcMaxPercent
	}
	return int(min(max(gcHeadroom*100/live, 100), gcMaxPercent))
}

var gcTuneOnce sync.Once

// Start starts setting GOGC after each collection from the live heap it left, unless GOGC
// is set in the environment (the runtime reads it itself). It lasts as long as the process.
func Start() {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	gcTuneOnce.Do(func() {
		debug.SetGCPercent(gcMaxPercent) // the live heap is small at start
		armGCTune(gcMaxPercent, nil)
	})
}

// gcSentinel is an object whose only reference is dropped at once: its cleanup runs after the
// next collection. It is not tiny (the tiny allocator batches small pointer-free objects, whose
// cleanups may never run).
type gcSentinel struct {
	_ *gcSentinel
	_ [16]byte
}

// armGCTune sets GOGC from the live heap after the next collection, and again after each one
// while tuned (nil: always) says to go on; it is told the GOGC in force. percent is the GOGC in
// force now.
func armGCTune(percent int, tuned func(percent int) bool) {
	runtime.AddCleanup(&gcSentinel{}, func(percent int) {
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(sample)
		if sample[0].Value.Kind() == metrics.KindUint64 {
			// Setting GOGC stops the world for a moment: only for a change of a tenth or more.
			if p := gcPercentFor(sample[0].Value.Uint64()); p*10 < percent*9 || p*10 > percent*11 {
				debug.SetGCPercent(p)
				percent = p
			}
		}
		if tuned == nil || tuned(percent) {
			armGCTune(percent, tuned)
		}
	}, percent)
}
