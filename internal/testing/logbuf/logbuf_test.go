package logbuf

import (
	"regexp"
	"testing"
)

// A waiter is woken by the write it waits for, from another goroutine.
func TestWaitForWakesAtTheWrite(t *testing.T) {
	var b Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.Logger().Info("first")
		b.Logger().Info("second", "n", 2)
	}()
	if got := b.WaitCount(t, regexp.MustCompile(`msg=\w+`), 2); len(got) != 2 {
		t.Errorf("WaitCount = %q, want two matches", got)
	}
	<-done
	if n := b.Count("msg=second", "n=2"); n != 1 {
		t.Errorf("Count = %d, want 1", n)
	}
}

// WaitUntil returns when the writer is gone, saying whether what it waited for came.
func TestWaitUntilGone(t *testing.T) {
	var b Buffer
	gone := make(chan struct{})
	go func() { b.Write([]byte("bye\n")); close(gone) }()
	text, ok := b.WaitUntil(t, "never", gone, func(s string) bool { return s == "never" })
	if ok || text != "bye\n" {
		t.Errorf("WaitUntil = %q, %v; want the text and false", text, ok)
	}
}

// Records reads back what JSONLogger wrote, one map a record.
func TestRecords(t *testing.T) {
	var b Buffer
	b.JSONLogger().Debug("first", "n", 1)
	b.JSONLogger().Warn("second")
	recs := b.Records(t)
	if len(recs) != 2 || recs[0]["msg"] != "first" || recs[0]["n"] != float64(1) || recs[0]["level"] != "DEBUG" || recs[1]["level"] != "WARN" {
		t.Errorf("Records = %v", recs)
	}
}
