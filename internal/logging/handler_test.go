package logging

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

var formats = []string{"human", "text", "json"}

func TestPriorityPrefix(t *testing.T) {
	for _, tt := range []struct {
		level slog.Level
		want  string
	}{
		{slog.LevelDebug - 4, "<7>"},
		{slog.LevelDebug, "<7>"},
		{slog.LevelDebug + 1, "<6>"},
		{slog.LevelInfo, "<6>"},
		{slog.LevelInfo + 1, "<4>"},
		{slog.LevelWarn, "<4>"},
		{slog.LevelWarn + 1, "<3>"},
		{slog.LevelError, "<3>"},
		{slog.LevelError + 4, "<3>"},
	} {
		for _, format := range formats {
			t.Run(fmt.Sprintf("%s/%v", format, tt.level), func(t *testing.T) {
				var buf bytes.Buffer
				h := NewHandler(&buf, &Options{Format: format, Journal: true, Level: slog.LevelDebug - 4})
				slog.New(h).Log(context.Background(), tt.level, "msg", "k", "v")
				line := buf.String()
				rest, ok := strings.CutPrefix(line, tt.want)
				if !ok {
					t.Fatalf("line %q does not start with %q", line, tt.want)
				}
				if strings.Count(line, "\n") != 1 || !strings.HasSuffix(line, "\n") {
					t.Errorf("line %q is not one line", line)
				}
				switch format {
				case "human":
					if !strings.HasPrefix(rest, tt.level.String()+" ") {
						t.Errorf("line %q: want the level right after the prefix", line)
					}
				case "text":
					if want := "level=" + tt.level.String() + " msg=msg k=v\n"; rest != want {
						t.Errorf("after the prefix got %q, want %q (no time)", rest, want)
					}
				case "json":
					var m map[string]any
					if err := json.Unmarshal([]byte(rest), &m); err != nil {
						t.Fatalf("after the prefix, %q: %v", rest, err)
					}
					if _, ok := m["time"]; ok || m["level"] != tt.level.String() || m["msg"] != "msg" {
						t.Errorf("after the prefix got %v, want level %v, msg and no time", m, tt.level)
					}
				}
			})
		}
	}
}

// TestNoJournal checks that without Journal lines carry their time and no prefix.
func TestNoJournal(t *testing.T) {
	for _, tt := range []struct {
		format string
		want   *regexp.Regexp
	}{
		{"human", regexp.MustCompile(`^\d\d:\d\d:\d\d\.\d\d\d WARN  msg k=v\n$`)},
		{"text", regexp.MustCompile(`^time=\S+ level=WARN msg=msg k=v\n$`)},
		{"json", regexp.MustCompile(`^\{"time":"[^"]+","level":"WARN","msg":"msg","k":"v"\}\n$`)},
		{"unknown means text", regexp.MustCompile(`^time=\S+ level=WARN msg=msg k=v\n$`)},
	} {
		var buf bytes.Buffer
		slog.New(NewHandler(&buf, &Options{Format: tt.format})).Warn("msg", "k", "v")
		if !tt.want.MatchString(buf.String()) {
			t.Errorf("%s: got %q, want a match for %s", tt.format, buf.String(), tt.want)
		}
	}
}

func TestNilOptions(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(NewHandler(&buf, nil))
	if log.Enabled(context.Background(), slog.LevelDebug) {
		t.Error("debug enabled with nil options, want info and above")
	}
	log.Debug("dropped")
	log.Info("kept", "k", "a b")
	if re := regexp.MustCompile(`^time=\S+ level=INFO msg=kept k="a b"\n$`); !re.MatchString(buf.String()) {
		t.Errorf("got %q, want slog's text format with time", buf.String())
	}
}

func TestOptionsNotModified(t *testing.T) {
	o := &Options{Format: "human"}
	NewHandler(&bytes.Buffer{}, o)
	if *o != (Options{Format: "human"}) {
		t.Errorf("NewHandler changed the caller's options to %+v", *o)
	}
}

// TestJournalKeepsTimeAttr checks that only the record's own time goes, not an attribute that
// happens to be called "time".
func TestJournalKeepsTimeAttr(t *testing.T) {
	for _, tt := range []struct{ format, want string }{
		{"text", "<6>level=INFO msg=msg time=user\n"},
		{"json", `<6>{"level":"INFO","msg":"msg","time":"user"}` + "\n"},
		{"human", "<6>INFO  msg time=user\n"},
	} {
		var buf bytes.Buffer
		slog.New(NewHandler(&buf, &Options{Format: tt.format, Journal: true})).Info("msg", "time", "user")
		if got := buf.String(); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.format, got, tt.want)
		}
	}
}

// writeRecorder keeps each Write call apart and notes any two that overlapped. It takes no lock
// of its own, so the race detector also sees writes the handler failed to serialise.
type writeRecorder struct {
	inFlight atomic.Int32
	overlap  atomic.Bool
	writes   []string
}

func (w *writeRecorder) Write(p []byte) (int, error) {
	if w.inFlight.Add(1) > 1 {
		w.overlap.Store(true)
	}
	defer w.inFlight.Add(-1)
	w.writes = append(w.writes, string(p))
	return len(p), nil
}

func TestConcurrentJournal(t *testing.T) {
	const goroutines, records = 8, 1000
	levels := []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError}
	priority := map[string]string{"DEBUG": "7", "INFO": "6", "WARN": "4", "ERROR": "3"}
	lines := map[string]*regexp.Regexp{
		"human": regexp.MustCompile(`^<(\d)>(\w+) +agent: tick g=(\d+) rec\.i=(\d+) rec\.text="a b=c"\n$`),
		"text":  regexp.MustCompile(`^<(\d)>level=(\w+) msg=tick component=agent g=(\d+) rec\.i=(\d+) rec\.text="a b=c"\n$`),
		"json":  regexp.MustCompile(`^<(\d)>\{"level":"(\w+)","msg":"tick","component":"agent","g":(\d+),"rec":\{"i":(\d+),"text":"a b=c"\}\}\n$`),
	}
	for _, format := range formats {
		t.Run(format, func(t *testing.T) {
			w := &writeRecorder{}
			base := slog.New(NewHandler(w, &Options{Format: format, Journal: true, Level: slog.LevelDebug})).
				With("component", "agent")
			var wg sync.WaitGroup
			for g := range goroutines {
				wg.Go(func() {
					log := base.With("g", g).WithGroup("rec")
					for i := range records {
						log.Log(context.Background(), levels[i%len(levels)], "tick", "i", i, "text", "a b=c")
					}
				})
			}
			wg.Wait()

			if w.overlap.Load() {
				t.Error("two Write calls overlapped")
			}
			if len(w.writes) != goroutines*records {
				t.Fatalf("%d writes, want one per record, %d", len(w.writes), goroutines*records)
			}
			var seen [goroutines][records]bool
			for _, line := range w.writes {
				m := lines[format].FindStringSubmatch(line)
				if m == nil {
					t.Fatalf("malformed line %q", line)
				}
				g, _ := strconv.Atoi(m[3])
				i, _ := strconv.Atoi(m[4])
				if g >= goroutines || i >= records || seen[g][i] {
					t.Fatalf("line %q: unexpected or repeated", line)
				}
				seen[g][i] = true
				if want := levels[i%len(levels)].String(); m[2] != want || m[1] != priority[want] {
					t.Errorf("line %q: want level %s with priority %s", line, want, priority[want])
				}
			}
		})
	}
}
