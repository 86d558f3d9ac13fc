package logging

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/devicectl/devicectl/internal/testing/logbuf"
)

// jsonLines is a JSON log in memory, safe for the timers' goroutines.
type jsonLines struct{ logbuf.Buffer }

func (j *jsonLines) handler() slog.Handler {
	return slog.NewJSONHandler(j, &slog.HandlerOptions{Level: slog.LevelInfo})
}

// records decodes every line written so far.
func (j *jsonLines) records(t *testing.T) []map[string]any {
	t.Helper()
	return j.Records(t)
}

// tally counts, for msg, the lines written and the records they stand for (1 for a line, its
// suppressed count for a summary).
func tally(recs []map[string]any, msg string) (lines, summaries, total int) {
	for _, m := range recs {
		if m["msg"] != msg {
			continue
		}
		lines++
		if n, ok := m["suppressed"].(float64); ok {
			summaries++
			total += int(n)
		} else {
			total++
		}
	}
	return lines, summaries, total
}

// 88,000 identical warnings in a burst come out as the first three and one summary when the
// window ends; the summary is the last record, and the count adds up exactly.
func TestRepeatsFlood(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out jsonLines
		r := NewRepeats(&RepeatOptions{Window: 10 * time.Second, Burst: 3})
		defer r.Close()
		log := slog.New(r.Handler(out.handler())).With("component", "hooks")
		const n = 88000
		for i := range n {
			log.Warn("event dropped", "total", i+1)
			if i%1000 == 0 {
				time.Sleep(time.Millisecond) // 88 ms in all
			}
		}
		if lines, _, _ := tally(out.records(t), "event dropped"); lines != 3 {
			t.Errorf("%d lines during the flood, want the first 3", lines)
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		recs := out.records(t)
		lines, summaries, total := tally(recs, "event dropped")
		if lines != 4 || summaries != 1 || total != n {
			t.Errorf("%d lines, %d summaries standing for %d records; want 4, 1, %d", lines, summaries, total, n)
		}
		last := recs[len(recs)-1]
		if last["level"] != "WARN" || last["total"] != float64(n) || last["suppressed"] != float64(n-3) ||
			last["within"] != float64(10*time.Second) || last["component"] != "hooks" {
			t.Errorf("summary %v, want the last record with suppressed=%d within=10s", last, n-3)
		}

		// After the window, the message is written again.
		log.Warn("event dropped", "total", n+1)
		if lines, _, _ := tally(out.records(t), "event dropped"); lines != 5 {
			t.Errorf("%d lines after a new record past the window, want 5", lines)
		}
	})
}

// Messages are counted apart, interleaved or not; records below the level, and a message that
// does not repeat past the burst, are written as they come with no summary.
func TestRepeatsPerMessage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out jsonLines
		r := NewRepeats(&RepeatOptions{Window: time.Second, Burst: 2})
		log := slog.New(r.Handler(out.handler()))
		for i := range 100 {
			log.Warn("a", "i", i)
			log.Error("b", "i", i)
			log.Warn("b", "i", i) // same message, another level: another count
			log.Info("c", "i", i)
		}
		log.Warn("d")
		log.Warn("d")
		r.Close() // writes the summaries due, without waiting for the window
		recs := out.records(t)
		for _, tc := range []struct {
			msg                     string
			lines, summaries, total int
		}{
			{"a", 3, 1, 100},
			{"b", 6, 2, 200},
			{"c", 100, 0, 100},
			{"d", 2, 0, 2},
		} {
			lines, summaries, total := tally(recs, tc.msg)
			if lines != tc.lines || summaries != tc.summaries || total != tc.total {
				t.Errorf("%s: %d lines, %d summaries, %d records; want %d, %d, %d", tc.msg, lines, summaries, total, tc.lines, tc.summaries, tc.total)
			}
		}
		// Closed: everything is written.
		log.Warn("a")
		log.Warn("a")
		log.Warn("a")
		if lines, _, _ := tally(out.records(t), "a"); lines != 6 {
			t.Errorf("after Close: %d lines of a, want 6", lines)
		}
		time.Sleep(time.Hour)
		if got := len(out.records(t)); got != len(recs)+3 {
			t.Errorf("%d lines an hour after Close, want %d: a timer fired after Close", got, len(recs)+3)
		}
	})
}

// Many goroutines flooding at once: nothing is lost from the count.
func TestRepeatsConcurrent(t *testing.T) {
	var out jsonLines
	r := NewRepeats(&RepeatOptions{Window: time.Hour, Burst: 5})
	log := slog.New(r.Handler(out.handler()))
	const goroutines, each = 8, 5000
	var wg sync.WaitGroup
	for g := range goroutines {
		sub := log.With("g", g) // derived loggers share the count
		wg.Go(func() {
			for i := range each {
				sub.Warn("flood", "i", i)
			}
		})
	}
	wg.Wait()
	r.Close()
	lines, summaries, total := tally(out.records(t), "flood")
	if lines != 6 || summaries != 1 || total != goroutines*each {
		t.Errorf("%d lines, %d summaries, %d records; want 6, 1, %d", lines, summaries, total, goroutines*each)
	}
}

// The options are copied, and the zero values mean the defaults.
func TestRepeatsDefaults(t *testing.T) {
	o := &RepeatOptions{}
	r := NewRepeats(o)
	defer r.Close()
	if *o != (RepeatOptions{}) {
		t.Errorf("the caller's options changed: %+v", *o)
	}
	if r.window != DefaultRepeatWindow || r.burst != DefaultRepeatBurst || r.level.Level() != slog.LevelWarn {
		t.Errorf("defaults %v %d %v", r.window, r.burst, r.level)
	}
}

func ExampleRepeats() {
	var out strings.Builder
	r := NewRepeats(&RepeatOptions{Burst: 2})
	log := slog.New(r.Handler(NewHandler(&out, &Options{Format: "text", Journal: true})))
	for i := range 1000 {
		log.Warn("hook queue full; dropped the oldest event", "dropped_total", i+1)
	}
	r.Close() // or wait for the window (10 s) to end
	fmt.Print(out.String())
	// Output:
	// <4>level=WARN msg="hook queue full; dropped the oldest event" dropped_total=1
	// <4>level=WARN msg="hook queue full; dropped the oldest event" dropped_total=2
	// <4>level=WARN msg="hook queue full; dropped the oldest event" dropped_total=1000 suppressed=998 within=10s
}

// A log that writes debug records is read whole: nothing is counted, nothing summarised.
func TestRepeatsOffInDebugLog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out jsonLines
		r := NewRepeats(&RepeatOptions{Window: time.Second, Burst: 2})
		debug := slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug})
		log := slog.New(r.Handler(debug))
		for i := range 50 {
			log.Warn("a", "i", i)
		}
		r.Close()
		if lines, summaries, total := tally(out.records(t), "a"); lines != 50 || summaries != 0 || total != 50 {
			t.Errorf("%d lines, %d summaries, %d records; want 50, 0, 50", lines, summaries, total)
		}
	})
}
