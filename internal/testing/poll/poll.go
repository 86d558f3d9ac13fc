// Package poll waits for what only a look can tell. What a real program does (a file it writes, a
// process it leaves, a level it sets on a sound server) wakes nothing in the test, and neither
// testing/synctest nor a fake clock can drive it, so a bounded poll is the wait. Where the
// awaited thing can say so itself (a channel, a write to a logbuf.Buffer), wait on that instead.
package poll

import (
	"testing"
	"time"
)

// Wait bounds every wait. A passing run never reaches it; it is generous because -race, qemu
// and a loaded CI machine slow a program's start by seconds.
const Wait = time.Minute

// every is how often cond is looked at: often enough that a wait ends moments after the event.
const every = 5 * time.Millisecond

// Until looks at cond until it holds, and fails t, naming what it waited for, when Wait passes
// first.
func Until(t testing.TB, what string, cond func() bool) {
	t.Helper()
	if !within(Wait, cond) {
		t.Fatalf("no %s within %s", what, Wait)
	}
}

// within looks at cond until it holds or d has passed, and reports whether it held.
func within(d time.Duration, cond func() bool) bool {
	end := time.Now().Add(d)
	for !cond() {
		if time.Now().After(end) {
			return false
		}
		time.Sleep(every)
	}
	return true
}
