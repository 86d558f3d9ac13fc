package logging

import (
	"errors"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"
)

func BenchmarkHandlers(b *testing.B) {
	errRefused := errors.New("connection refused")
	for _, bc := range []struct {
		name string
		h    slog.Handler
	}{
		{"slog.TextHandler", slog.NewTextHandler(io.Discard, nil)},
		{"text", NewHandler(io.Discard, &Options{Format: "text"})},
		{"text journal", NewHandler(io.Discard, &Options{Format: "text", Journal: true})},
		{"human", NewHandler(io.Discard, &Options{Format: "human"})},
		{"human journal", NewHandler(io.Discard, &Options{Format: "human", Journal: true})},
		{"human redacted", NewHandler(newBenchRedactor(), &Options{Format: "human"})},
		{"human switch", NewSwitch(NewHandler(io.Discard, &Options{Format: "human"}))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			log := slog.New(bc.h).With("component", "agent")
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					log.Info("registered", "server", "ws://x", "mac", "AA-BB-CC-DD-EE-FF", "tools", 3,
						"rtt", 15*time.Millisecond, "err", errRefused)
				}
			})
		})
	}
}

// BenchmarkRepeats is the cost Repeats adds in front of a handler: a record below its level, a
// flood it counts instead of writing (the hot path it is there for), and distinct messages it
// writes.
func BenchmarkRepeats(b *testing.B) {
	for _, bc := range []struct {
		name string
		log  func(log *slog.Logger, i int)
	}{
		{"info passes", func(log *slog.Logger, _ int) { log.Info("registered", "tools", 3) }},
		{"warn flood", func(log *slog.Logger, i int) { log.Warn("hook queue full", "dropped_total", i) }},
		{"warn distinct", func(log *slog.Logger, i int) { log.Warn(benchMessages[i%len(benchMessages)], "n", i) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r := NewRepeats(&RepeatOptions{Window: time.Millisecond, Burst: 3})
			defer r.Close()
			log := slog.New(r.Handler(NewHandler(io.Discard, &Options{Format: "human"}))).With("component", "hooks")
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					bc.log(log, i)
					i++
				}
			})
		})
	}
}

var benchMessages = func() []string {
	m := make([]string, 64)
	for i := range m {
		m[i] = "message " + strconv.Itoa(i)
	}
	return m
}()

func newBenchRedactor() *Redactor {
	r := NewRedactor(io.Discard)
	r.Add("tok-3f9a1c27e5")
	return r
}
