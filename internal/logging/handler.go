package logging

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// Options configure NewHandler. Nil means Format "text", level info, no journal prefix.
type Options struct {
	// Level is the minimum level logged; nil means slog.LevelInfo.
	Level slog.Leveler

	// Format is "human", "text" (slog.TextHandler, logfmt key=value) or "json"
	// (slog.JSONHandler); anything else is treated as "text".
	Format string

	// Journal says the output goes to the systemd journal: every line starts with the
	// sd-daemon priority prefix "<N>" (syslog level: debug 7, info 6, warn 4, error 3; levels
	// between map to the next more severe one) and the record's time is dropped, because
	// journald stamps each line itself.
	Journal bool

	// Color colours the level with ANSI escapes, for terminals. Human format only.
	Color bool
}

// NewHandler returns a slog.Handler writing one line per record to w, each with a single w.Write
// call. Handlers derived from it with WithAttrs and WithGroup write to w under the same lock.
func NewHandler(w io.Writer, o *Options) slog.Handler {
	var opts Options // a copy, so filling in defaults never touches the caller's struct
	if o != nil {
		opts = *o
	}
	if opts.Level == nil {
		opts.Level = slog.LevelInfo
	}
	out := &output{w: w}
	if opts.Format == "human" {
		return &humanHandler{out: out, level: opts.Level, journal: opts.Journal, color: opts.Color}
	}
	newInner := func(w io.Writer) slog.Handler {
		ho := &slog.HandlerOptions{Level: opts.Level}
		if opts.Format == "json" {
			return slog.NewJSONHandler(w, ho)
		}
		return slog.NewTextHandler(w, ho)
	}
	if !opts.Journal {
		return newInner(w)
	}
	// One inner handler per priority, each writing through a writer that puts its fixed prefix
	// in front: the priority is then known without parsing the formatted line or holding a lock
	// while the record is formatted, and slog's handlers still do all the formatting.
	var j journalHandler
	for i, p := range priorities {
		j.hs[i] = newInner(prefixWriter{prefix: p, out: out})
	}
	return &j
}

// priorities are the sd-daemon prefixes, indexed by prioritySlot.
var priorities = [...]string{"<3>", "<4>", "<6>", "<7>"}

// prioritySlot maps a level to its index in priorities: a level between two named ones takes
// the more severe, so a custom level never reads as less urgent than it is.
func prioritySlot(l slog.Level) int {
	switch {
	case l <= slog.LevelDebug:
		return 3 // debug
	case l <= slog.LevelInfo:
		return 2 // info
	case l <= slog.LevelWarn:
		return 1 // warning
	default:
		return 0 // err
	}
}

// output is the writer shared by a handler and everything derived from it; the lock keeps
// the records of concurrent loggers from interleaving in w.
type output struct {
	mu sync.Mutex
	w  io.Writer
}

func (o *output) write(p []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, err := o.w.Write(p)
	return err
}

// prefixWriter writes its prefix and each formatted record in one call to the shared output.
type prefixWriter struct {
	prefix string
	out    *output
}

func (w prefixWriter) Write(p []byte) (int, error) {
	b := getBuf()
	defer putBuf(b)
	*b = append(append(*b, w.prefix...), p...)
	if err := w.out.write(*b); err != nil {
		return 0, err
	}
	return len(p), nil
}

// journalHandler sends each record to the inner handler of its priority.
type journalHandler struct {
	hs [len(priorities)]slog.Handler
}

func (h *journalHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.hs[0].Enabled(ctx, l) // all share one Leveler
}

func (h *journalHandler) Handle(ctx context.Context, r slog.Record) error {
	// slog's handlers leave out a zero time. Zeroing it, rather than removing the "time" key
	// with ReplaceAttr, keeps an attribute the caller happened to name "time".
	r.Time = time.Time{}
	return h.hs[prioritySlot(r.Level)].Handle(ctx, r)
}

func (h *journalHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	var d journalHandler
	for i, in := range h.hs {
		d.hs[i] = in.WithAttrs(attrs)
	}
	return &d
}

func (h *journalHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	var d journalHandler
	for i, in := range h.hs {
		d.hs[i] = in.WithGroup(name)
	}
	return &d
}

// bufPool holds line buffers, so formatting a record does not allocate once warmed up.
var bufPool = sync.Pool{New: func() any {
	b := make([]byte, 0, 1024)
	return &b
}}

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

func putBuf(b *[]byte) {
	// One huge record (a dump) should not pin its buffer for the life of the process.
	if cap(*b) > 64<<10 {
		return
	}
	*b = (*b)[:0]
	bufPool.Put(b)
}
