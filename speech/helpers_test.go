package speech

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/devicectl/devicectl/internal/testing/leakcheck"
	"github.com/devicectl/devicectl/internal/testing/poll"
	"github.com/devicectl/devicectl/internal/testing/pulsetest"
)

// deadline bounds every wait in these tests; generous because -race and a loaded CI box slow
// process start-up, and a passing run never waits for it.
const deadline = 15 * time.Second

// recorder is a slog.Handler keeping every record, so tests can check what was logged.
type recorder struct {
	mu      sync.Mutex
	records []string // "LEVEL msg key=value ..."
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *recorder) WithGroup(string) slog.Handler            { return r }

func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", rec.Level, rec.Message)
	rec.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	r.mu.Lock()
	r.records = append(r.records, b.String())
	r.mu.Unlock()
	return nil
}

// at returns the records at level and above.
func (r *recorder) at(level slog.Level) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, s := range r.records {
		if lv, _, _ := strings.Cut(s, " "); levelOf(lv) >= level {
			out = append(out, s)
		}
	}
	return out
}

func levelOf(s string) slog.Level {
	var l slog.Level
	_ = l.UnmarshalText([]byte(s))
	return l
}

// waitClosed waits for ch to be closed, or fails at the deadline.
func waitClosed(t *testing.T, what string, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(deadline):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// waitIdle waits for everything queued on s to be spoken.
func waitIdle(t *testing.T, s *Speaker) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	if err := s.Wait(ctx); err != nil {
		t.Fatalf("Wait: %v (an utterance never finished)", err)
	}
}

// sayScript is a stand-in synthesizer. It appends "begin <text>" and "end <text>" to the log
// file named by $1 and records its pid in $1.pid. Text containing "hold" waits until $1.go
// exists; "child" waits on a grandchild whose pid goes to $1.child; "fail" exits 3 with a message
// on stderr.
const sayScript = `#!/bin/sh
log=$1
text=$(cat)
echo $$ > "$log.pid"
printf 'begin %s\n' "$text" >> "$log"
case $text in
*hold*) while [ ! -e "$log.go" ]; do sleep 0.01; done ;;
*child*) sleep 60 & echo $! > "$log.child"; wait ;;
*fail*) echo "synth exploded" >&2; exit 3 ;;
esac
printf 'end %s\n' "$text" >> "$log"
`

// fakeSynth writes sayScript to a temporary directory and returns the command that runs it and
// the log it writes.
func fakeSynth(t *testing.T) (command []string, log string) {
	t.Helper()
	pulsetest.Need(t, "sh", "dash")
	dir := t.TempDir()
	script := filepath.Join(dir, "say.sh")
	if err := os.WriteFile(script, []byte(sayScript), 0o755); err != nil {
		t.Fatal(err)
	}
	log = filepath.Join(dir, "spoken.log")
	return []string{script, log}, log
}

// synthSpeaker starts a Speaker (as newSpeaker does) whose command is fakeSynth's, and returns it
// with the log the command writes.
func synthSpeaker(t *testing.T) (*Speaker, string) {
	t.Helper()
	cmd, log := fakeSynth(t)
	return newSpeaker(t, &Options{Command: cmd}), log
}

// lines returns the lines of the log so far.
func lines(t *testing.T, log string) []string {
	t.Helper()
	b, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// waitLine waits until the fake synthesizer has written line to its log. The script, a process of
// its own, tells nothing but the file, so this looks at it until the line is there.
func waitLine(t *testing.T, log, line string) {
	t.Helper()
	poll.Until(t, fmt.Sprintf("%q in the synthesizer's log", line), func() bool { return slices.Contains(lines(t, log), line) })
}

// release lets a "hold" utterance finish.
func release(t *testing.T, log string) {
	t.Helper()
	if err := os.WriteFile(log+".go", nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// newSpeaker starts a Speaker that is closed, and checked for leaked goroutines, when the test
// ends.
func newSpeaker(t *testing.T, opts *Options) *Speaker {
	t.Helper()
	leakcheck.Check(t) // first, so its check runs after the Close below
	s, err := NewSpeaker(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func diff(got, want []string) string {
	if strings.Join(got, "\n") == strings.Join(want, "\n") {
		return ""
	}
	return fmt.Sprintf("got:\n\t%s\nwant:\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
}
