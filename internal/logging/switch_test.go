package logging

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func TestSwitchFollowsSet(t *testing.T) {
	var first, second, third bytes.Buffer
	sw := NewSwitch(NewHandler(&first, &Options{Format: "human", Journal: true}))
	// Derived before any Set, as a component does at start-up.
	log := slog.New(sw).With("component", "x").WithGroup("g")

	for _, step := range []struct {
		name       string
		set        slog.Handler // nil: keep the current target
		out        *bytes.Buffer
		infoOn     bool
		wantLogged string
	}{{
		name:       "initial target",
		out:        &first,
		infoOn:     true,
		wantLogged: "<6>INFO  x: info g.k=1\n<4>WARN  x: warn g.k=2\n",
	}, {
		name:       "json at warn, elsewhere",
		set:        NewHandler(&second, &Options{Format: "json", Journal: true, Level: slog.LevelWarn}),
		out:        &second,
		wantLogged: `<4>{"level":"WARN","msg":"warn","component":"x","g":{"k":2}}` + "\n",
	}, {
		name:       "text at debug",
		set:        NewHandler(&third, &Options{Format: "text", Journal: true, Level: slog.LevelDebug}),
		out:        &third,
		infoOn:     true,
		wantLogged: "<6>level=INFO msg=info component=x g.k=1\n<4>level=WARN msg=warn component=x g.k=2\n",
	}} {
		if step.set != nil {
			sw.Set(step.set)
		}
		before := [...]int{first.Len(), second.Len(), third.Len()}
		if got := log.Enabled(context.Background(), slog.LevelInfo); got != step.infoOn {
			t.Errorf("%s: info enabled %v, want %v", step.name, got, step.infoOn)
		}
		log.Info("info", "k", 1)
		log.Warn("warn", "k", 2)
		after := [...]int{first.Len(), second.Len(), third.Len()}
		for i, buf := range []*bytes.Buffer{&first, &second, &third} {
			got := string(buf.Bytes()[before[i]:after[i]])
			want := ""
			if buf == step.out {
				want = step.wantLogged
			}
			if got != want {
				t.Errorf("%s: output %d got %q, want %q", step.name, i+1, got, want)
			}
		}
	}
}

func TestSwitchNil(t *testing.T) {
	sw := NewSwitch(nil)
	log := slog.New(sw).With("a", 1)
	if log.Enabled(context.Background(), slog.LevelError) {
		t.Error("a Switch to nil is enabled, want records discarded")
	}
	log.Error("discarded") // must not panic
	var buf bytes.Buffer
	sw.Set(NewHandler(&buf, &Options{Format: "human", Journal: true}))
	sw.Set(nil)
	log.Error("discarded")
	if buf.Len() != 0 {
		t.Errorf("Set(nil) still wrote %q", buf.String())
	}
}

// countingHandler counts the WithAttrs and WithGroup calls made on it and its descendants, and
// the records they handle.
type countingHandler struct {
	derives, handled *atomic.Int64
	level            slog.Level
}

func newCounting(level slog.Level) countingHandler {
	return countingHandler{derives: new(atomic.Int64), handled: new(atomic.Int64), level: level}
}

func (h countingHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h countingHandler) Handle(context.Context, slog.Record) error {
	h.handled.Add(1)
	return nil
}

func (h countingHandler) WithAttrs([]slog.Attr) slog.Handler {
	h.derives.Add(1)
	return h
}

func (h countingHandler) WithGroup(string) slog.Handler {
	h.derives.Add(1)
	return h
}

func TestSwitchCachesDerived(t *testing.T) {
	a, b := newCounting(slog.LevelInfo), newCounting(slog.LevelInfo)
	sw := NewSwitch(a)
	log := slog.New(sw).With("component", "x").WithGroup("g").With("k", 1)
	sibling := slog.New(sw).With("component", "x").WithGroup("h")

	for _, step := range []struct {
		name                 string
		set                  slog.Handler
		wantA, wantB         int64 // derivations
		wantHandA, wantHandB int64
	}{
		{"first target", nil, 3 + 2, 0, 200, 0},
		{"after Set", b, 3 + 2, 3 + 2, 200, 200},
		{"Set back", a, 3 + 2 + 3 + 2, 3 + 2, 400, 200},
	} {
		if step.set != nil {
			sw.Set(step.set)
		}
		for range 100 {
			log.Info("msg")
			sibling.Info("msg")
		}
		if got := a.derives.Load(); got != step.wantA {
			t.Errorf("%s: %d derivations of the first target, want %d", step.name, got, step.wantA)
		}
		if got := b.derives.Load(); got != step.wantB {
			t.Errorf("%s: %d derivations of the second target, want %d", step.name, got, step.wantB)
		}
		if got := a.handled.Load(); got != step.wantHandA {
			t.Errorf("%s: first target handled %d, want %d", step.name, got, step.wantHandA)
		}
		if got := b.handled.Load(); got != step.wantHandB {
			t.Errorf("%s: second target handled %d, want %d", step.name, got, step.wantHandB)
		}
	}
}

// TestSwitchConcurrentSet logs from many goroutines while the target changes under them; run
// with -race.
func TestSwitchConcurrentSet(t *testing.T) {
	const goroutines, records = 8, 500
	var bufA, bufB bytes.Buffer
	hs := []slog.Handler{
		NewHandler(&bufA, &Options{Format: "text", Journal: true}),
		NewHandler(&bufB, &Options{Format: "human", Journal: true}),
	}
	sw := NewSwitch(hs[0])
	base := slog.New(sw).With("component", "x")

	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
				sw.Set(hs[i%2])
			}
		}
	})
	var loggers sync.WaitGroup
	for range goroutines {
		loggers.Go(func() {
			log := base.WithGroup("g").With("a", 1)
			for i := range records {
				log.Info("msg", "i", i)
			}
		})
	}
	loggers.Wait()
	close(stop)
	wg.Wait()

	lines := strings.Split(strings.TrimSuffix(bufA.String()+bufB.String(), "\n"), "\n")
	if len(lines) != goroutines*records {
		t.Fatalf("%d lines, want %d", len(lines), goroutines*records)
	}
	for _, l := range lines {
		text := strings.HasPrefix(l, "<6>level=INFO msg=msg component=x g.a=1 g.i=")
		human := strings.HasPrefix(l, "<6>INFO  x: msg g.a=1 g.i=")
		if !text && !human {
			t.Fatalf("line %q lost its attributes or groups", l)
		}
	}
}
