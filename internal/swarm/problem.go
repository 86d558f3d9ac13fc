package swarm

import (
	"context"
	"log/slog"
	"sync/atomic"
)

// problemHandler passes records on to next and keeps the text of the latest warning or error,
// whatever next's level. With a swarm's devices failing alike (the server gone), one line saying
// why is worth more than a line per device.
type problemHandler struct {
	next slog.Handler
	last *atomic.Pointer[string]
}

func (h *problemHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn || h.next.Enabled(ctx, l)
}

func (h *problemHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		text := r.Message
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "err" {
				text += ": " + a.Value.String()
				return false
			}
			return true
		})
		h.last.Store(&text)
	}
	if !h.next.Enabled(ctx, r.Level) {
		return nil
	}
	return h.next.Handle(ctx, r)
}

func (h *problemHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &problemHandler{next: h.next.WithAttrs(as), last: h.last}
}

func (h *problemHandler) WithGroup(name string) slog.Handler {
	return &problemHandler{next: h.next.WithGroup(name), last: h.last}
}
