package logging

import (
	"context"
	"log/slog"
	"slices"
	"sync/atomic"
)

// Switch is a slog.Handler that forwards to a handler that can be replaced with Set. Handlers
// derived from it with WithAttrs and WithGroup (the handlers of loggers made with With and
// WithGroup) follow every later Set: their attributes and groups are re-applied to the new
// target. Safe for concurrent use.
//
// A derived handler keeps the handler it built for the current target, so a record costs no
// WithAttrs unless Set was called since the last one.
type Switch struct {
	root *Switch
	cur  atomic.Pointer[target] // used in the root only

	// For a derived Switch: its parent and the one step it adds, a group or attributes.
	parent *Switch
	group  string
	attrs  []slog.Attr
	built  atomic.Pointer[built]
}

// target is one handler given to NewSwitch or Set. Each Set makes a new one, so its address
// identifies the generation a derived handler was built for.
type target struct{ h slog.Handler }

// built is a derived handler, applied to the target t.
type built struct {
	t *target
	h slog.Handler
}

// NewSwitch returns a Switch forwarding to h. A nil h discards records.
func NewSwitch(h slog.Handler) *Switch {
	s := &Switch{}
	s.root = s
	s.Set(h)
	return s
}

// Set makes s and every handler derived from it forward to h from now on. A nil h discards
// records. A record being handled while Set runs goes to the old target or the new one, never to
// both.
func (s *Switch) Set(h slog.Handler) {
	if h == nil {
		h = slog.DiscardHandler
	}
	s.root.cur.Store(&target{h: h})
}

// handler returns the handler records go to now.
func (s *Switch) handler() slog.Handler {
	return s.resolve(s.root.cur.Load())
}

// resolve returns s's handler built on t. Building walks up to the root only when the cache
// is stale; the parent's cache serves the siblings too.
func (s *Switch) resolve(t *target) slog.Handler {
	if s.parent == nil {
		return t.h
	}
	if b := s.built.Load(); b != nil && b.t == t {
		return b.h
	}
	h := s.parent.resolve(t)
	if s.group != "" {
		h = h.WithGroup(s.group)
	} else {
		h = h.WithAttrs(s.attrs)
	}
	// Two goroutines may both build after a Set; either result is right for t, and a store for
	// an older target is only a miss for the next record.
	s.built.Store(&built{t: t, h: h})
	return h
}

// Enabled asks the current target, so a new level applies at once.
func (s *Switch) Enabled(ctx context.Context, l slog.Level) bool {
	return s.handler().Enabled(ctx, l)
}

// Handle hands r to the current target.
func (s *Switch) Handle(ctx context.Context, r slog.Record) error {
	return s.handler().Handle(ctx, r)
}

// WithAttrs returns a Switch that adds attrs to the records of whichever target is current.
func (s *Switch) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return s
	}
	return &Switch{root: s.root, parent: s, attrs: slices.Clone(attrs)}
}

// WithGroup returns a Switch that opens group name in whichever target is current.
func (s *Switch) WithGroup(name string) slog.Handler {
	if name == "" {
		return s
	}
	return &Switch{root: s.root, parent: s, group: name}
}
