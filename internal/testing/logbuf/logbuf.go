// Package logbuf is a buffer for tests that follow what a running part writes (its log, its
// output): safe for the part's goroutines and the test's at once, and woken at every write, so a
// test waits for a line as it is written instead of polling or sleeping.
package logbuf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Wait bounds every wait: what is awaited takes milliseconds, so reaching it is a failure.
const Wait = 10 * time.Second

// Buffer is an io.Writer whose text a test reads and waits on. The zero value is ready.
type Buffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	written chan struct{} // closed at the next write
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.written != nil {
		close(b.written)
		b.written = nil
	}
	return b.b.Write(p)
}

// String returns all that was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Reset empties b, for a test that looks at what comes next.
func (b *Buffer) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.b.Reset()
}

// Logger logs everything, debug included, as text into b.
func (b *Buffer) Logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// JSONLogger logs everything, debug included, as JSON lines into b, for tests that read the
// records back with Records.
func (b *Buffer) JSONLogger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// Records decodes every line written so far as a JSON log record; a line that is not one fails t.
func (b *Buffer) Records(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(b.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, rec)
	}
	return out
}

// Count returns how many lines hold every one of subs.
func (b *Buffer) Count(subs ...string) int {
	n := 0
	for _, line := range strings.Split(b.String(), "\n") {
		all := line != ""
		for _, s := range subs {
			all = all && strings.Contains(line, s)
		}
		if all {
			n++
		}
	}
	return n
}

// WaitFor returns the text once ok holds for it, checking after each write; it fails the test
// (naming what it waited for) when Wait passes first.
func (b *Buffer) WaitFor(t testing.TB, what string, ok func(string) bool) string {
	t.Helper()
	text, _ := b.WaitUntil(t, what, nil, ok)
	return text
}

// WaitUntil is WaitFor that gives up when gone is closed first (the writer has exited): it
// returns the text then, and whether ok holds for it.
func (b *Buffer) WaitUntil(t testing.TB, what string, gone <-chan struct{}, ok func(string) bool) (string, bool) {
	t.Helper()
	return b.wait(t, what, Wait, gone, ok)
}

// WaitWithin is WaitFor for what is due later than Wait: a reminder set for a time to come.
func (b *Buffer) WaitWithin(t testing.TB, what string, d time.Duration, ok func(string) bool) string {
	t.Helper()
	text, _ := b.wait(t, what, d, nil, ok)
	return text
}

func (b *Buffer) wait(t testing.TB, what string, d time.Duration, gone <-chan struct{}, ok func(string) bool) (string, bool) {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		b.mu.Lock()
		text := b.b.String()
		if b.written == nil {
			b.written = make(chan struct{})
		}
		written := b.written
		b.mu.Unlock()
		if ok(text) {
			return text, true
		}
		select {
		case <-written:
		case <-gone:
			text = b.String()
			return text, ok(text)
		case <-timer.C:
			t.Fatalf("no %s within %s:\n%s", what, d, text)
		}
	}
}

// WaitCount waits until the text holds n matches of re, and returns them.
func (b *Buffer) WaitCount(t testing.TB, re *regexp.Regexp, n int) [][]string {
	t.Helper()
	var m [][]string
	b.WaitFor(t, fmt.Sprintf("%d lines matching %q", n, re), func(s string) bool {
		m = re.FindAllStringSubmatch(s, -1)
		return len(m) >= n
	})
	return m
}
