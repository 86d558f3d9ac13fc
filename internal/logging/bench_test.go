package logging

import (
	"errors"
	"io"
	"log/slog"
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

func newBenchRedactor() *Redactor {
	r := NewRedactor(io.Discard)
	r.Add("tok-3f9a1c27e5")
	return r
}
