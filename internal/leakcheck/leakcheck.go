// Package leakcheck fails a test whose goroutines outlive it. Every package's tests use it, so
// that "a stop leaves nothing running" is checked one way everywhere.
package leakcheck

import (
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

func check(t testing.TB, grace time.Duration) {
	before := stacks()
	t.Cleanup(func() {
		deadline := time.Now().Add(grace)
		for {
			var leaked []string
			for id, stack := range stacks() {
				if _, ok := before[id]; !ok && !runtimeOnly(stack) {
					leaked = append(leaked, stack)
				}
			}
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
