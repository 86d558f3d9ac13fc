package leakcheck

import (
	"strings"
	"testing"
	"time"
)

// recorder is a testing.TB that keeps its failures and cleanups instead of acting on them.
type recorder struct {
	testing.TB
	errs     []string
	cleanups []func()
}

func (r *recorder) Helper()                      {}
func (r *recorder) Cleanup(f func())             { r.cleanups = append(r.cleanups, f) }
func (r *recorder) Errorf(f string, args ...any) { r.errs = append(r.errs, f) }

func (r *recorder) end() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

func TestCheckFindsALeak(t *testing.T) {
	stop := make(chan struct{})
	r := &recorder{TB: t}
	check(r, 50*time.Millisecond)
	go func() { <-stop }()
	r.end()
	close(stop)
	if len(r.errs) != 1 || !strings.Contains(r.errs[0], "still running") {
		t.Errorf("errors = %q, want one about the goroutine still running", r.errs)
	}
}

func TestCheckPassesWhenGoroutinesEnd(t *testing.T) {
	r := &recorder{TB: t}
	check(r, 50*time.Millisecond)
	done := make(chan struct{})
	go func() { close(done) }()
	<-done
	r.end()
	if len(r.errs) != 0 {
		t.Errorf("errors = %q, want none", r.errs)
	}
}
