// Package leakcheck fails a test whose goroutines outlive it, so that "a stop leaves nothing
// running" is checked one way everywhere: Check per test, or Main for a whole package from its
// TestMain where the tests are too many, or run in parallel, to check one by one.
package leakcheck

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// grace is how long a test's goroutines may take to end after it has cleaned up: closed
// connections let theirs go within moments, and the check returns as soon as they have. Reaching
// it is a failure, never the expected path, so it is generous for a loaded machine.
const grace = 10 * time.Second

// Check records the goroutines running now and, when t has cleaned up, fails it if any goroutine
// started since is still running, with their stacks. Call it first, so its cleanup runs after the
// test's own. Tests that use it must not run in parallel: their goroutines would mix.
func Check(t testing.TB) {
	t.Helper()
	check(t, grace)
}

// Main runs the package's tests and then fails the package, with the stacks on stderr, if any
// goroutine but the runtime's is still running: every goroutine a test started must be gone once
// the tests have returned. Call it from TestMain: os.Exit(leakcheck.Main(m)).
func Main(m *testing.M) int {
	return runMain(m.Run, grace, os.Stderr)
}

func runMain(run func() int, grace time.Duration, stderr io.Writer) int {
	code := run()
	if code != 0 {
		return code
	}
	deadline := time.Now().Add(grace)
	for {
		var leaked []string
		for _, stack := range stacks() {
			if !runtimeOnly(stack) && !lasting(stack) && !mainGoroutine(stack) {
				leaked = append(leaked, stack)
			}
		}
		if len(leaked) == 0 {
			return 0
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(stderr, "%d goroutines are still running after the tests:\n\n%s\n", len(leaked), strings.Join(leaked, "\n\n"))
			return 1
		}
		time.Sleep(5 * time.Millisecond) // goroutines end asynchronously
	}
}

// mainGoroutine reports the goroutine running the tests and this check.
func mainGoroutine(stack string) bool {
	return strings.Contains(stack, "leakcheck.runMain(") || strings.Contains(stack, "testing.(*M).Run(")
}

// lasting reports a goroutine that runs for the rest of the process by design: os/signal's loop
// starts at the first signal.Notify and never ends.
func lasting(stack string) bool {
	return strings.Contains(stack, "os/signal.loop")
}

func check(t testing.TB, grace time.Duration) {
	before := Now()
	t.Cleanup(func() {
		deadline := time.Now().Add(grace)
		for {
			leaked := before.Started()
			if len(leaked) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("%d goroutines started by the test are still running:\n\n%s", len(leaked), strings.Join(leaked, "\n\n"))
				return
			}
			time.Sleep(5 * time.Millisecond) // goroutines end asynchronously
		}
	})
}

// Mark is the set of goroutines running at one moment, for a test that asks what a call started
// while the test still runs (Check and Main look only once it is over).
type Mark struct{ running map[string]string }

// Now marks the goroutines running now.
func Now() Mark { return Mark{running: stacks()} }

// Started returns the stacks of the goroutines started since m and running now, the runtime's and
// the testing package's aside. It does not wait: a goroutine on its way out still counts.
func (m Mark) Started() []string {
	var started []string
	for id, stack := range stacks() {
		if _, ok := m.running[id]; !ok && !runtimeOnly(stack) {
			started = append(started, stack)
		}
	}
	return started
}

// stacks returns every goroutine's stack by goroutine id.
func stacks() map[string]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	m := make(map[string]string)
	for _, g := range strings.Split(string(buf), "\n\n") {
		// "goroutine 42 [chan receive]:"
		header, _, _ := strings.Cut(g, "\n")
		id, _, _ := strings.Cut(strings.TrimPrefix(header, "goroutine "), " ")
		m[id] = g
	}
	return m
}

// runtimeOnly reports a goroutine of the runtime or the testing package (GC workers, the test
// runner), which come and go on their own.
func runtimeOnly(stack string) bool {
	for _, line := range strings.Split(stack, "\n")[1:] {
		if strings.HasPrefix(line, "\t") || line == "" {
			continue
		}
		fn := strings.TrimPrefix(line, "created by ")
		if !strings.HasPrefix(fn, "runtime.") && !strings.HasPrefix(fn, "testing.") {
			return false
		}
	}
	return true
}
