package hooks_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/devicectl/devicectl/hooks"
	"github.com/devicectl/devicectl/internal/testing/leakcheck"
)

// dumpScript saves what the hook got, in the directory $1: its environment (env), its stdin
// (stdin) and its number of arguments (argc).
const dumpScript = `out=$1
env > "$out/env"
cat > "$out/stdin"
echo "$#" > "$out/argc"
`

// dump is what one run of dumpScript saw.
type dump struct {
	env   map[string]string
	stdin string
	argc  string
}

// newDumper returns the argv of a dumpScript hook, and a function that reads what its last run
// saved.
func newDumper(t *testing.T) (argv []string, read func() dump) {
	dir := t.TempDir()
	return []string{script(t, dumpScript), dir}, func() dump {
		t.Helper()
		d := dump{env: make(map[string]string)}
		// The values these tests use hold no newline, so env's output is one variable a line.
		for _, line := range lines(t, filepath.Join(dir, "env")) {
			k, v, _ := strings.Cut(line, "=")
			d.env[k] = v
		}
		b, err := os.ReadFile(filepath.Join(dir, "stdin"))
		if err != nil {
			t.Fatal(err)
		}
		d.stdin = string(b)
		b, err = os.ReadFile(filepath.Join(dir, "argc"))
		if err != nil {
			t.Fatal(err)
		}
		d.argc = strings.TrimSpace(string(b))
		return d
	}
}

// ours returns the DEVICECTL_ variables of env.
func ours(env map[string]string) map[string]string {
	m := make(map[string]string)
	for k, v := range env {
		if strings.HasPrefix(k, "DEVICECTL_") {
			m[k] = v
		}
	}
	return m
}

func TestEnvironmentAndStdin(t *testing.T) {
	base := []string{"PATH=" + os.Getenv("PATH"), "HOOKS_TEST=kept"}
	for _, tc := range []struct {
		name   string
		env    []string // added to base
		common map[string]string
		vars   map[string]string
		want   map[string]string // the DEVICECTL_ variables but TIME, by key without the prefix
	}{{
		name:   "details and common",
		common: map[string]string{"SERVER": "wss://example.com/ws", "MAC": "aa:bb:cc:dd:ee:ff"},
		vars:   map[string]string{"TOOL": "amplify_volume", "RESULT": `{"volume": 80} <&> 'quoted' "double" $HOME`},
		want: map[string]string{
			"EVENT": "tool_executed", "SERVER": "wss://example.com/ws", "MAC": "aa:bb:cc:dd:ee:ff",
			"TOOL": "amplify_volume", "RESULT": `{"volume": 80} <&> 'quoted' "double" $HOME`,
		},
	}, {
		name:   "a detail wins over a common variable",
		common: map[string]string{"SERVER": "wss://a", "MODE": "common"},
		vars:   map[string]string{"MODE": "detail"},
		want:   map[string]string{"EVENT": "tool_executed", "SERVER": "wss://a", "MODE": "detail"},
	}, {
		name:   "keys that cannot name a variable are dropped",
		common: map[string]string{"lower": "x", "OK_COMMON": "c", "EVENT": "spoofed"},
		vars: map[string]string{
			"tool": "x", "BAD-KEY": "x", "": "x", "A B": "x", "É": "x",
			"EVENT": "spoofed", "TIME": "spoofed", "OK_1": "y",
		},
		want: map[string]string{"EVENT": "tool_executed", "OK_COMMON": "c", "OK_1": "y"},
	}, {
		name: "no details",
		want: map[string]string{"EVENT": "tool_executed"},
	}, {
		name: "DEVICECTL_ variables of the base environment are removed",
		env:  []string{"DEVICECTL_TOKEN=secret", "DEVICECTL_TOOL=stale"},
		vars: map[string]string{"ERROR": ""},
		want: map[string]string{"EVENT": "tool_executed", "ERROR": ""},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			argv, read := newDumper(t)
			r := newRunner(t, &hooks.Options{
				Commands: map[hooks.Event][]string{hooks.ToolExecuted: argv},
				Env:      append(slices.Clone(base), tc.env...),
				Common:   tc.common,
			})
			before := time.Now()
			r.Fire(hooks.ToolExecuted, tc.vars)
			after := time.Now()
			closeRunner(t, r)
			d := read()

			if d.argc != "1" {
				t.Errorf("the hook got %s arguments, want 1 (nothing appended)", d.argc)
			}
			if d.env["HOOKS_TEST"] != "kept" {
				t.Errorf("HOOKS_TEST = %q: the base environment was not passed", d.env["HOOKS_TEST"])
			}
			got := ours(d.env)
			at := got["DEVICECTL_TIME"]
			delete(got, "DEVICECTL_TIME")
			want := make(map[string]string)
			for k, v := range tc.want {
				want["DEVICECTL_"+k] = v
			}
			if !maps.Equal(got, want) {
				t.Errorf("DEVICECTL_ variables (TIME aside):\n got %q\nwant %q", got, want)
			}
			checkTime(t, at, before, after)

			if !strings.HasSuffix(d.stdin, "}\n") || strings.Count(d.stdin, "\n") != 1 {
				t.Errorf("stdin %q is not one line", d.stdin)
			}
			if prefix := `{"event":"tool_executed","time":"` + at + `"`; !strings.HasPrefix(d.stdin, prefix) {
				t.Errorf("stdin %q does not start with %q", d.stdin, prefix)
			}
			var obj map[string]string
			if err := json.Unmarshal([]byte(d.stdin), &obj); err != nil {
				t.Fatalf("stdin %q: %v", d.stdin, err)
			}
			wantObj := map[string]string{"time": at}
			for k, v := range tc.want {
				wantObj[strings.ToLower(k)] = v
			}
			if !maps.Equal(obj, wantObj) {
				t.Errorf("stdin:\n got %q\nwant %q", obj, wantObj)
			}
		})
	}
}

// checkTime checks that s is DEVICECTL_TIME's format and lies between before and after.
func checkTime(t *testing.T, s string, before, after time.Time) {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Errorf("DEVICECTL_TIME %q: %v", s, err)
		return
	}
	if len(s) != len("2006-01-02T15:04:05.000000000Z") || !strings.HasSuffix(s, "Z") {
		t.Errorf("DEVICECTL_TIME %q: want UTC with nine digits of nanoseconds", s)
	}
	if at.Before(before.Truncate(0)) || at.After(after.Truncate(0)) {
		t.Errorf("DEVICECTL_TIME %v is not when Fire was called (%v to %v)", at, before, after)
	}
}

// TestLongValues: a value over 16 KiB is cut in its variable and flagged, whole on stdin; one
// far over Linux's 128 KiB limit on an environment string does not stop the hook from running.
func TestLongValues(t *testing.T) {
	const limit = 16 << 10
	odd := "a" + strings.Repeat("é", limit) // the limit falls inside an é
	exact := strings.Repeat("x", limit)
	huge := strings.Repeat("z", 200<<10)
	argv, read := newDumper(t)
	r := newRunner(t, &hooks.Options{
		Commands: map[hooks.Event][]string{hooks.FinalReply: argv},
		Common:   map[string]string{"HUGE": huge},
	})
	r.Fire(hooks.FinalReply, map[string]string{"ODD": odd, "EXACT": exact, "NUL": "a\x00b"})
	closeRunner(t, r)
	d := read()

	if got, want := d.env["DEVICECTL_ODD"], odd[:limit-1]; got != want {
		t.Errorf("DEVICECTL_ODD is %d bytes, want %d (cut before the é the limit splits)", len(got), len(want))
	}
	if !utf8.ValidString(d.env["DEVICECTL_ODD"]) {
		t.Error("DEVICECTL_ODD is not valid UTF-8")
	}
	if got, want := d.env["DEVICECTL_HUGE"], huge[:limit]; got != want {
		t.Errorf("DEVICECTL_HUGE is %d bytes, want %d", len(got), len(want))
	}
	if d.env["DEVICECTL_EXACT"] != exact {
		t.Errorf("DEVICECTL_EXACT is %d bytes, want all %d", len(d.env["DEVICECTL_EXACT"]), len(exact))
	}
	if got := d.env["DEVICECTL_NUL"]; got != "ab" {
		t.Errorf("DEVICECTL_NUL = %q, want %q", got, "ab")
	}
	for k, want := range map[string]string{"ODD": "1", "HUGE": "1", "EXACT": "", "NUL": ""} {
		if got := d.env["DEVICECTL_"+k+"_TRUNCATED"]; got != want {
			t.Errorf("DEVICECTL_%s_TRUNCATED = %q, want %q", k, got, want)
		}
	}
	var obj map[string]string
	if err := json.Unmarshal([]byte(d.stdin), &obj); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"odd": odd, "exact": exact, "huge": huge, "nul": "a\x00b"} {
		if obj[k] != want {
			t.Errorf("stdin %q is %d bytes, want all %d", k, len(obj[k]), len(want))
		}
	}
	if _, ok := obj["odd_truncated"]; ok {
		t.Error("stdin has odd_truncated: nothing is cut there")
	}
}

// TestOrder: hooks run one at a time in the order their events were fired, whatever the events.
func TestOrder(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	// Each run takes a moment, so that the queue fills behind it and overlapping runs would
	// have the time to interleave.
	argv := []string{script(t, `printf '%s %s start\n' "$DEVICECTL_EVENT" "$DEVICECTL_N" >> "$1"
sleep 0.01
printf '%s %s end\n' "$DEVICECTL_EVENT" "$DEVICECTL_N" >> "$1"
`), log}
	cmds := make(map[hooks.Event][]string)
	for _, ev := range hooks.Events {
		cmds[ev] = argv
	}
	r := newRunner(t, &hooks.Options{Commands: cmds})
	var want []string
	for i := range 50 {
		ev := hooks.Events[i%len(hooks.Events)]
		r.Fire(ev, map[string]string{"N": strconv.Itoa(i)})
		want = append(want, fmt.Sprintf("%s %d start", ev, i), fmt.Sprintf("%s %d end", ev, i))
	}
	closeRunner(t, r)
	if d := diff(lines(t, log), want); d != "" {
		t.Error(d)
	}
}

// TestConcurrentFire: Fire is safe to call from several goroutines, and keeps each one's order.
func TestConcurrentFire(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	argv := []string{script(t, `printf '%s %s\n' "$DEVICECTL_G" "$DEVICECTL_N" >> "$1"`), log}
	const goroutines, each = 4, 20
	r := newRunner(t, &hooks.Options{
		Commands:  map[hooks.Event][]string{hooks.ToolExecuted: argv},
		QueueSize: goroutines * each,
	})
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for n := range each {
				r.Fire(hooks.ToolExecuted, map[string]string{"G": strconv.Itoa(g), "N": strconv.Itoa(n)})
			}
		})
	}
	wg.Wait()
	closeRunner(t, r)
	next := make([]int, goroutines)
	got := lines(t, log)
	for _, line := range got {
		var g, n int
		if _, err := fmt.Sscan(line, &g, &n); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if n != next[g] {
			t.Errorf("goroutine %d: event %d ran when %d was due", g, n, next[g])
		}
		next[g] = n + 1
	}
	if len(got) != goroutines*each {
		t.Errorf("%d hooks ran, want %d", len(got), goroutines*each)
	}
}

// TestFireDoesNotBlock fires while a hook runs, and holds the hook until every Fire has
// returned: were Fire to wait for the hook, the Fires would never all return.
func TestFireDoesNotBlock(t *testing.T) {
	h := newHolder(t)
	const n = 100
	r := newRunner(t, &hooks.Options{
		Commands:  map[hooks.Event][]string{hooks.ToolExecuted: h.argv},
		QueueSize: n,
	})
	r.Fire(hooks.ToolExecuted, map[string]string{"HOLD": "1", "N": "held"})
	h.waitStarted(t)
	fired := make(chan int)
	go func() {
		count := 0
		for i := range n {
			r.Fire(hooks.ToolExecuted, map[string]string{"N": strconv.Itoa(i)})
			count++
		}
		fired <- count
	}()
	select {
	case count := <-fired:
		if count != n {
			t.Fatalf("%d Fire calls returned, want %d", count, n)
		}
	case <-time.After(deadline):
		h.release(t) // let the goroutine end
		<-fired
		t.Fatal("Fire blocked while a hook was running")
	}
	if got := h.ran(t); len(got) != 0 {
		t.Fatalf("hooks ran while the first was held: %q", got)
	}
	h.release(t)
	closeRunner(t, r)
	want := []string{"held"}
	for i := range n {
		want = append(want, strconv.Itoa(i))
	}
	if d := diff(h.ran(t), want); d != "" {
		t.Error(d)
	}
}

// TestQueueFull: when events pile up behind a hook, the oldest waiting ones are dropped, each
// with a warning counting the drops so far.
func TestQueueFull(t *testing.T) {
	h := newHolder(t)
	var log logBuffer
	r := newRunner(t, &hooks.Options{
		Commands:  map[hooks.Event][]string{hooks.Connected: h.argv, hooks.Disconnected: h.argv},
		QueueSize: 3,
		Logger:    log.logger(),
	})
	r.Fire(hooks.Connected, map[string]string{"HOLD": "1", "N": "0"})
	h.waitStarted(t) // it runs, so it is not waiting: the queue is empty
	for i := 1; i <= 10; i++ {
		ev := hooks.Connected
		if i%2 == 0 {
			ev = hooks.Disconnected
		}
		r.Fire(ev, map[string]string{"N": strconv.Itoa(i)})
	}
	h.release(t)
	closeRunner(t, r)
	if d := diff(h.ran(t), []string{"0", "8", "9", "10"}); d != "" {
		t.Error(d)
	}
	warns := log.records(t, "hook queue full; dropped the oldest event")
	if len(warns) != 7 {
		t.Fatalf("%d queue-full warnings, want 7:\n%s", len(warns), &log)
	}
	for i, w := range warns {
		wantDropped := "connected" // events 1 to 7 in turn
		if i%2 == 1 {
			wantDropped = "disconnected"
		}
		if w["level"] != "WARN" || w["component"] != "hooks" || w["dropped_total"] != float64(i+1) ||
			w["dropped_event"] != wantDropped || w["queue_size"] != float64(3) {
			t.Errorf("warning %d: %v", i, w)
		}
	}
}

// TestFailureIsLoggedNotFatal: a failing hook is logged with its status and the end of its
// output, and the next hook runs as usual.
func TestFailureIsLoggedNotFatal(t *testing.T) {
	for _, tc := range []struct {
		name       string
		body       string
		timeout    time.Duration
		remove     bool // delete the program after New, so that it cannot start
		wantStatus string
		wantOutput []string // in the output quoted, in this order
	}{{
		name:       "exit status",
		body:       "echo 'some output'\necho 'tool exploded' >&2\nexit 3\n",
		wantStatus: "exit status 3",
		wantOutput: []string{"some output", "tool exploded"},
	}, {
		name:       "long output keeps its end",
		body:       "i=0\nwhile [ $i -lt 300 ]; do echo \"noise $i é\"; i=$((i+1)); done\necho 'the real reason' >&2\nexit 1\n",
		wantStatus: "exit status 1",
		wantOutput: []string{"…", "noise 299 é", "the real reason"},
	}, {
		name:       "signal",
		body:       "echo 'going down'\nkill -TERM $$\nsleep 5\n",
		wantStatus: "signal: terminated",
		wantOutput: []string{"going down"},
	}, {
		name:       "timeout",
		body:       "echo 'started'\nsleep 30\n",
		timeout:    200 * time.Millisecond,
		wantStatus: "timed out after 200ms",
		wantOutput: []string{"started"},
	}, {
		name:       "cannot start",
		body:       "exit 0\n",
		remove:     true,
		wantStatus: "no such file or directory",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var log logBuffer
			prog := script(t, tc.body)
			next := newHolder(t)
			r := newRunner(t, &hooks.Options{
				Commands: map[hooks.Event][]string{
					hooks.ToolExecuted: {prog},
					hooks.FinalReply:   next.argv,
				},
				Timeout: tc.timeout,
				Logger:  log.logger(),
			})
			if tc.remove {
				if err := os.Remove(prog); err != nil {
					t.Fatal(err)
				}
			}
			r.Fire(hooks.ToolExecuted, nil)
			r.Fire(hooks.FinalReply, map[string]string{"N": "next"})
			closeRunner(t, r)
			if d := diff(next.ran(t), []string{"next"}); d != "" {
				t.Errorf("the hook after the failing one: %s", d)
			}
			warns := log.records(t, "hook failed")
			if len(warns) != 1 {
				t.Fatalf("%d failures logged, want 1:\n%s", len(warns), &log)
			}
			w := warns[0]
			if w["level"] != "WARN" || w["event"] != "tool_executed" || w["program"] != prog {
				t.Errorf("failure logged as %v", w)
			}
			if status, _ := w["status"].(string); !strings.Contains(status, tc.wantStatus) {
				t.Errorf("status %q, want %q in it", status, tc.wantStatus)
			}
			out, _ := w["output"].(string)
			rest := out
			for _, s := range tc.wantOutput {
				i := strings.Index(rest, s)
				if i < 0 {
					t.Errorf("output %q: want %q (in order)", out, tc.wantOutput)
					break
				}
				rest = rest[i+len(s):]
			}
			if len(out) > 1024+len("…") || !utf8.ValidString(out) {
				t.Errorf("output quoted is %d bytes (valid UTF-8: %v), want at most 1 KiB", len(out), utf8.ValidString(out))
			}
			if ran := log.records(t, "hook ran"); len(ran) != 1 || ran[0]["event"] != "final_reply" {
				t.Errorf("successful runs logged: %v, want the final_reply one", ran)
			}
		})
	}
}

// TestStdinNeedNotBeRead: hooks that never read stdin, even when it is larger than a pipe
// holds, or that close it, succeed and do not hold up the queue.
func TestStdinNeedNotBeRead(t *testing.T) {
	big := strings.Repeat("x", 1<<20) // far more than a pipe's buffer
	for _, tc := range []struct {
		name string
		body string
		vars map[string]string
	}{
		{"exits at once", "exit 0\n", map[string]string{"BIG": big}},
		{"runs a while without reading", "sleep 0.2\n", map[string]string{"BIG": big}},
		{"closes stdin", "exec 0<&-\nsleep 0.1\n", map[string]string{"BIG": big}},
		{"small stdin, not read", "true\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log logBuffer
			r := newRunner(t, &hooks.Options{
				Commands: map[hooks.Event][]string{hooks.FinalReply: {script(t, tc.body)}},
				Logger:   log.logger(),
			})
			for range 3 {
				r.Fire(hooks.FinalReply, tc.vars)
			}
			closeRunner(t, r)
			if w := log.at(t, slog.LevelWarn); len(w) != 0 {
				t.Errorf("warnings: %q", w)
			}
			if ran := log.records(t, "hook ran"); len(ran) != 3 {
				t.Errorf("%d successful runs logged, want 3:\n%s", len(ran), &log)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "not-executable")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		opts   hooks.Options
		want   []string    // in the message
		wantIs error       // wrapped
		event  hooks.Event // of the *CommandError; "" for none
	}{{
		name:   "program not in PATH",
		opts:   hooks.Options{Commands: map[hooks.Event][]string{hooks.ToolExecuted: {"devicectl-no-such-hook", "arg"}}},
		want:   []string{"tool_executed", `"devicectl-no-such-hook"`},
		wantIs: exec.ErrNotFound,
		event:  hooks.ToolExecuted,
	}, {
		name:   "program path does not exist",
		opts:   hooks.Options{Commands: map[hooks.Event][]string{hooks.FinalReply: {filepath.Join(dir, "missing")}}},
		want:   []string{"final_reply", filepath.Join(dir, "missing")},
		wantIs: fs.ErrNotExist,
		event:  hooks.FinalReply,
	}, {
		name:   "program not executable",
		opts:   hooks.Options{Commands: map[hooks.Event][]string{hooks.Connected: {notExec}}},
		want:   []string{"connected", notExec},
		wantIs: fs.ErrPermission,
		event:  hooks.Connected,
	}, {
		name:  "empty argv",
		opts:  hooks.Options{Commands: map[hooks.Event][]string{hooks.Registered: {}}},
		want:  []string{"registered"},
		event: hooks.Registered,
	}, {
		name:  "nil argv",
		opts:  hooks.Options{Commands: map[hooks.Event][]string{hooks.Disconnected: nil}},
		want:  []string{"disconnected"},
		event: hooks.Disconnected,
	}, {
		name:  "empty program name",
		opts:  hooks.Options{Commands: map[hooks.Event][]string{hooks.Connected: {"", "arg"}}},
		want:  []string{"connected", "empty program"},
		event: hooks.Connected,
	}, {
		name:  "unknown event",
		opts:  hooks.Options{Commands: map[hooks.Event][]string{"Connected": {"true"}}},
		want:  []string{"hooks: Connected: not an event", "connected, registered"},
		event: "Connected",
	}, {
		name: "negative timeout",
		opts: hooks.Options{Timeout: -time.Second},
		want: []string{"timeout", "-1s"},
	}, {
		name: "negative queue size",
		opts: hooks.Options{QueueSize: -1},
		want: []string{"queue size", "-1"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			leakcheck.Check(t)
			r, err := hooks.New(&tc.opts)
			if err == nil {
				r.Close(context.Background())
				t.Fatal("New succeeded")
			}
			if r != nil {
				t.Errorf("New returned a Runner with its error %v", err)
			}
			if !strings.HasPrefix(err.Error(), "hooks: ") {
				t.Errorf("error %q does not say where it comes from", err)
			}
			for _, s := range tc.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("error %q does not wrap %v", err, tc.wantIs)
			}
			var ce *hooks.CommandError
			switch {
			case tc.event == "" && errors.As(err, &ce):
				t.Errorf("error %q is a CommandError for %q; it is about no event", err, ce.Event)
			case tc.event != "" && !errors.As(err, &ce):
				t.Errorf("error %q is not a *CommandError", err)
			case tc.event != "" && (ce.Event != tc.event || strings.Contains(ce.Err.Error(), "hooks:")):
				t.Errorf("CommandError{%q, %q}, want the event %q, and Err without it", ce.Event, ce.Err, tc.event)
			}
		})
	}
}

func TestNilRunner(t *testing.T) {
	var r *hooks.Runner
	r.Fire(hooks.Connected, map[string]string{"X": "y"})
	if r.Has(hooks.Connected) {
		t.Error("Has on a nil Runner = true")
	}
	if err := r.Close(context.Background()); err != nil {
		t.Errorf("Close on a nil Runner = %v", err)
	}
}

// TestNoCommands: a Runner without hooks works, does nothing, and has no goroutine to leak.
func TestNoCommands(t *testing.T) {
	for _, opts := range []*hooks.Options{nil, {}, {Commands: map[hooks.Event][]string{}}} {
		mark := leakcheck.Now()
		r, err := hooks.New(opts)
		if err != nil {
			t.Fatal(err)
		}
		if started := mark.Started(); len(started) != 0 {
			t.Errorf("New(%v) started %d goroutine(s):\n\n%s", opts, len(started), strings.Join(started, "\n\n"))
		}
		for _, ev := range hooks.Events {
			if r.Has(ev) {
				t.Errorf("Has(%s) = true", ev)
			}
			r.Fire(ev, nil)
		}
		if err := r.Close(context.Background()); err != nil {
			t.Errorf("Close = %v", err)
		}
	}
}

func TestHas(t *testing.T) {
	r := newRunner(t, &hooks.Options{Commands: map[hooks.Event][]string{
		hooks.Connected:    {"true"},
		hooks.ToolExecuted: {"true", "ignored argument"},
	}})
	for ev, want := range map[hooks.Event]bool{
		hooks.Connected:    true,
		hooks.Registered:   false,
		hooks.Disconnected: false,
		hooks.ToolExecuted: true,
		hooks.FinalReply:   false,
		"":                 false,
		"connected ":       false,
	} {
		if got := r.Has(ev); got != want {
			t.Errorf("Has(%q) = %v, want %v", ev, got, want)
		}
	}
}

// TestCloseGivesUp: when Close's context ends first, the running hook is killed, the queued
// events are dropped (and logged), and Close returns promptly with the context's error.
func TestCloseGivesUp(t *testing.T) {
	h := newHolder(t)
	var log logBuffer
	r := newRunner(t, &hooks.Options{
		Commands: map[hooks.Event][]string{hooks.Connected: h.argv, hooks.Disconnected: h.argv},
		Timeout:  time.Hour,
		Logger:   log.logger(),
	})
	r.Fire(hooks.Connected, map[string]string{"HOLD": "1", "N": "held"})
	h.waitStarted(t)
	r.Fire(hooks.Disconnected, map[string]string{"N": "1"})
	r.Fire(hooks.Connected, map[string]string{"N": "2"})

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := r.Close(ctx)
	// The held hook would run for ever; a second for waitDelay, and a lot of slack.
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("Close took %v", took)
	}
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "3 event") {
		t.Errorf("Close = %v, want 3 events not run, and context.DeadlineExceeded", err)
	}
	if again := r.Close(context.Background()); !errors.Is(again, context.DeadlineExceeded) {
		t.Errorf("Close again = %v, want the same as the first", again)
	}
	if got := h.ran(t); len(got) != 0 {
		t.Errorf("hooks ran to the end: %q", got)
	}
	killed := log.records(t, "hook failed")
	if len(killed) != 1 || killed[0]["status"] != "killed: devicectl is closing" || killed[0]["event"] != "connected" {
		t.Errorf("logged failures %v, want the held hook killed", killed)
	}
	dropped := log.records(t, "closing; dropped the events still queued")
	if len(dropped) != 1 || dropped[0]["count"] != float64(2) ||
		fmt.Sprint(dropped[0]["events"]) != "[disconnected connected]" {
		t.Errorf("logged drops %v, want the 2 queued events", dropped)
	}
}

// TestClose: Close waits for the queue, may be called again, and Fire after it does nothing.
func TestClose(t *testing.T) {
	h := newHolder(t)
	r := newRunner(t, &hooks.Options{Commands: map[hooks.Event][]string{hooks.Registered: h.argv}})
	r.Fire(hooks.Registered, map[string]string{"N": "1"})
	r.Fire(hooks.Registered, map[string]string{"N": "2"})
	for range 2 {
		if err := r.Close(context.Background()); err != nil {
			t.Fatalf("Close = %v", err)
		}
	}
	r.Fire(hooks.Registered, map[string]string{"N": "3"})
	// The worker is gone once Close has returned: nothing fired later can still run.
	if d := diff(h.ran(t), []string{"1", "2"}); d != "" {
		t.Error(d)
	}
	if !r.Has(hooks.Registered) {
		t.Error("Has changed after Close")
	}
}

// TestConcurrentClose: Closes and Fires racing each other all return, under -race.
func TestConcurrentClose(t *testing.T) {
	h := newHolder(t)
	r := newRunner(t, &hooks.Options{Commands: map[hooks.Event][]string{hooks.Registered: h.argv}})
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			r.Fire(hooks.Registered, map[string]string{"N": strconv.Itoa(i)})
			if err := r.Close(context.Background()); err != nil {
				t.Errorf("Close = %v", err)
			}
		})
	}
	wg.Wait()
	if got := h.ran(t); len(got) == 0 || len(got) > 4 {
		t.Errorf("ran %q: want between 1 and 4 of the events", got)
	}
}

// TestOptionsCopied: New keeps nothing of the caller's, Fire nothing of its vars, and neither
// changes them.
func TestOptionsCopied(t *testing.T) {
	h := newHolder(t)
	argv := slices.Clone(h.argv)
	common := map[string]string{"WHO": "common"}
	opts := &hooks.Options{Commands: map[hooks.Event][]string{hooks.Connected: argv}, Common: common}
	r := newRunner(t, opts)
	argv[1] = t.TempDir() // where the hook would write, had New kept the caller's argv
	common["WHO"] = "changed"
	common["ADDED"] = "x"
	if opts.Timeout != 0 || opts.QueueSize != 0 || opts.Env != nil || opts.Logger != nil {
		t.Errorf("New filled in the caller's options: %+v", opts)
	}

	r.Fire(hooks.Connected, map[string]string{"HOLD": "1", "N": "held"})
	h.waitStarted(t)
	vars := map[string]string{"N": "as fired"}
	r.Fire(hooks.Connected, vars)
	vars["N"] = "changed"
	h.release(t)
	closeRunner(t, r)
	if d := diff(h.ran(t), []string{"held common", "as fired common"}); d != "" {
		t.Error(d)
	}
}
