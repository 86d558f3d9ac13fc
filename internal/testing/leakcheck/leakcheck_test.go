package leakcheck

import (
	"bytes"
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

func TestMainFindsALeak(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	var stderr bytes.Buffer
	code := runMain(func() int { go func() { <-stop }(); return 0 }, 50*time.Millisecond, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "still running after the tests") || !strings.Contains(stderr.String(), "TestMainFindsALeak") {
		t.Errorf("code %d, stderr %q; want 1 and the leaked goroutine's stack", code, stderr.String())
	}
}

func TestMainPassesWhenGoroutinesEnd(t *testing.T) {
	var stderr bytes.Buffer
	run := func() int {
		done := make(chan struct{})
		go func() { close(done) }()
		<-done
		return 0
	}
	if code := runMain(run, time.Second, &stderr); code != 0 {
		t.Errorf("code %d, stderr %q; want 0", code, stderr.String())
	}
	if code := runMain(func() int { return 3 }, time.Second, &stderr); code != 3 {
		t.Errorf("a failed run gave code %d; want its own 3", code)
	}
}

func TestStartedNamesWhatRunsSinceTheMark(t *testing.T) {
	stop := make(chan struct{})
	running := make(chan struct{})
	go func() { close(running); <-stop }() // before the mark: not counted
	<-running
	m := Now()
	if s := m.Started(); len(s) != 0 {
		t.Errorf("Started right after the mark = %q, want none", s)
	}
	done := make(chan struct{})
	go func() { <-stop; close(done) }()
	if s := m.Started(); len(s) != 1 || !strings.Contains(s[0], "TestStartedNamesWhatRunsSinceTheMark") {
		t.Errorf("Started = %q, want the one goroutine started since the mark", s)
	}
	close(stop)
	<-done
}
