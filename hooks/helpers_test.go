package hooks_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/devicectl/devicectl/hooks"
	"github.com/devicectl/devicectl/internal/testing/leakcheck"
	"github.com/devicectl/devicectl/internal/testing/logbuf"
	"github.com/devicectl/devicectl/internal/testing/poll"
)

// The tests run real programs: small shell scripts written to a temporary directory. They do
// not run in parallel, so that no fork can inherit a script's file while it is being written
// (which makes exec fail with "text file busy").

// deadline bounds every wait in these tests; generous because -race and a loaded CI box slow
// process start-up, and a passing run never waits for it.
const deadline = 15 * time.Second

// script writes an executable shell script and returns its path.
func script(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hook.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// holdScript is a hook that appends $DEVICECTL_N to $1/ran, and $DEVICECTL_WHO if set. When DEVICECTL_HOLD is 1 it first
// creates $1/started, then waits until $1/release exists: a hook that is running for as long as
// the test wants.
const holdScript = `dir=$1
if [ "$DEVICECTL_HOLD" = 1 ]; then
	touch "$dir/started"
	while [ ! -e "$dir/release" ]; do sleep 0.01; done
fi
printf '%s\n' "$DEVICECTL_N${DEVICECTL_WHO:+ $DEVICECTL_WHO}" >> "$dir/ran"
`

// holder runs holdScript in its own directory.
type holder struct {
	argv []string
	dir  string
}

func newHolder(t *testing.T) holder {
	dir := t.TempDir()
	return holder{argv: []string{script(t, holdScript), dir}, dir: dir}
}

// waitStarted waits for the held hook to be running.
func (h holder) waitStarted(t *testing.T) {
	t.Helper()
	poll.Until(t, "the held hook to start", func() bool {
		_, err := os.Stat(filepath.Join(h.dir, "started"))
		return err == nil
	})
}

// release lets the held hook finish.
func (h holder) release(t *testing.T) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(h.dir, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// ran returns what the hooks that ran to the end appended, in order.
func (h holder) ran(t *testing.T) []string {
	t.Helper()
	return lines(t, filepath.Join(h.dir, "ran"))
}

// lines returns the lines of the file at path, none if it does not exist.
func lines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// newRunner starts a Runner that is closed, and checked for leaked goroutines, when the test
// ends. Tests that check how Close went call it themselves: a later Close returns what the
// first did, and the cleanup ignores it.
func newRunner(t *testing.T, opts *hooks.Options) *hooks.Runner {
	t.Helper()
	leakcheck.Check(t) // first, so its check runs after the Close below
	r, err := hooks.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		defer cancel()
		r.Close(ctx)
	})
	return r
}

// closeRunner closes r, letting its hooks finish, and fails if that takes past the deadline.
func closeRunner(t *testing.T, r *hooks.Runner) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	if err := r.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// logBuffer collects a Runner's log as JSON lines, written by the worker and the callers of Fire
// while the test reads it.
type logBuffer struct{ logbuf.Buffer }

// logger returns a logger writing everything, debug included, to l.
func (l *logBuffer) logger() *slog.Logger { return l.JSONLogger() }

// records returns the records logged so far with the message msg, as decoded JSON.
func (l *logBuffer) records(t *testing.T, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, rec := range l.Records(t) {
		if rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

// at returns the records logged at level, as JSON text.
func (l *logBuffer) at(t *testing.T, level slog.Level) []string {
	t.Helper()
	var out []string
	for line := range strings.Lines(l.String()) {
		var rec struct{ Level string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec.Level == level.String() {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}

func diff(got, want []string) string {
	if strings.Join(got, "\n") == strings.Join(want, "\n") {
		return ""
	}
	return fmt.Sprintf("got:\n\t%s\nwant:\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
}
