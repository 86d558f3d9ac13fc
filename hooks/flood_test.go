package hooks_test

import (
	"encoding/json"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/hooks"
	"github.com/devicectl/devicectl/internal/logging"
	"github.com/devicectl/devicectl/internal/testing/logbuf"
)

// 88,000 events dropped behind a stuck hook, logged through logging.Repeats as the daemon logs
// them: a handful of lines, and a summary whose count makes up the rest exactly.
func TestDroppedEventsFloodIsCounted(t *testing.T) {
	h := newHolder(t)
	var out logbuf.Buffer
	repeats := logging.NewRepeats(nil) // the daemon's settings
	r := newRunner(t, &hooks.Options{
		Commands:  map[hooks.Event][]string{hooks.ToolExecuted: h.argv},
		QueueSize: 4,
		Logger:    slog.New(repeats.Handler(slog.NewJSONHandler(&out, nil))),
	})
	r.Fire(hooks.ToolExecuted, map[string]string{"HOLD": "1", "N": "0"})
	h.waitStarted(t)
	const fired = 88000
	for i := 1; i <= fired; i++ {
		r.Fire(hooks.ToolExecuted, map[string]string{"N": strconv.Itoa(i)})
	}
	const dropped = fired - 4 // all but the queue's last four
	h.release(t)
	closeRunner(t, r)
	repeats.Close() // as the daemon does on its way out; or the window's end

	var lines, summaries, counted int
	var last map[string]any
	for line := range strings.Lines(out.String()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if m["msg"] != "hook queue full; dropped the oldest event" {
			continue
		}
		lines++
		last = m
		if n, ok := m["suppressed"].(float64); ok {
			summaries++
			counted += int(n)
		} else {
			counted++
		}
	}
	if lines > 10 || summaries == 0 || counted != dropped {
		t.Errorf("%d lines (%d summaries) standing for %d drops; want a handful, with summaries, for %d", lines, summaries, counted, dropped)
	}
	if last["dropped_total"] != float64(dropped) || last["suppressed"] == nil {
		t.Errorf("the last line %v, want a summary with dropped_total=%d", last, dropped)
	}
	if d := diff(h.ran(t), []string{"0", "87997", "87998", "87999", "88000"}); d != "" {
		t.Errorf("hooks run: %s", d)
	}
}
