package daemon

import (
	"os"
	"runtime/debug"
)

// GCPercent is the device daemon's garbage collection target (GOGC) unless the environment sets
// GOGC. Its live heap stays well under 1 MB, so under load its heap is Go's minimum of 4 MB times
// GOGC/100: half the default keeps 2 MB of a board's memory for a few more collections, each
// short with so little live (docs/design.md, Targets).
const GCPercent = 50

// TuneGC puts GCPercent in force for this process, unless GOGC is set: the operator's word wins.
// The device daemon calls it; a process that also runs the agent server (sim) keeps Go's default.
func TuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(GCPercent)
	}
}
