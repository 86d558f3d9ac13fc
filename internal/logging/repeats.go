package logging

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Defaults of RepeatOptions.
const (
	DefaultRepeatWindow = 10 * time.Second
	DefaultRepeatBurst  = 3
)

// RepeatOptions configure NewRepeats. Nil means the defaults.
type RepeatOptions struct {
	// Window is how long the records of one message are counted together; 0 means
	// DefaultRepeatWindow.
	Window time.Duration
	// Burst is how many records of one message are written as usual in a window before the rest
	// are counted; 0 means DefaultRepeatBurst.
	Burst int
	// Level is the least level aggregated; records below it are always written. Nil means
	// slog.LevelWarn: the floods that drown a journal are warnings and errors, and a debug log
	// is read whole.
	Level slog.Leveler
}

// Repeats keeps a flood of one log message from drowning the others (journald rate-limits a
// unit, then drops lines whatever they say). Records are grouped by level and message, whatever
// their attributes: a warning logged once per dropped event or per refused request carries a
// counter or an address that differs each time, and is still one flood. Of each group, the first
// Burst records of a window are written; the others are counted, and when the window ends one
// summary is written: the last record counted, with the attribute suppressed=N (how many were
// not written, it included) and within=Window. Written lines plus the suppressed counts add up
// to every record handled. A record after the window starts a new one. Nothing is aggregated
// while the next handler writes debug records: a debug log is read whole.
//
// The summaries are written by timers Repeats owns; Close writes the ones still due and stops
// them. Handlers made with Handler share the counts, so a logger derived with With, or a handler
// built on another target, is one flood with its siblings; a summary goes through the handler
// that took the record it repeats. Safe for concurrent use.
type Repeats struct {
	window time.Duration
	burst  int
	level  slog.Leveler

	mu     sync.Mutex
	runs   map[repeatKey]*repeatRun
	swept  time.Time // when runs was last rid of windows that ended with nothing counted
	closed bool
	timers sync.WaitGroup // one per timer that may still fire
}

type repeatKey struct {
	level slog.Level
	msg   string
}

// repeatRun is one window of one message.
type repeatRun struct {
	end        time.Time
	written    int
	suppressed int
	last       slog.Record    // the last record counted
	h          *repeatHandler // the handler that took it
	timer      *time.Timer    // set at the first record counted
	taken      bool           // its summary is being written, by the timer, Handle or Close
}

// NewRepeats returns a Repeats with o's settings; o may be nil. Make its handlers with Handler.
func NewRepeats(o *RepeatOptions) *Repeats {
	var opts RepeatOptions // a copy: the caller's struct is not changed
	if o != nil {
		opts = *o
	}
	if opts.Window <= 0 {
		opts.Window = DefaultRepeatWindow
	}
	if opts.Burst <= 0 {
		opts.Burst = DefaultRepeatBurst
	}
	if opts.Level == nil {
		opts.Level = slog.LevelWarn
	}
	return &Repeats{window: opts.Window, burst: opts.Burst, level: opts.Level, runs: map[repeatKey]*repeatRun{}}
}

// Handler returns a handler that writes to next what r lets through.
func (r *Repeats) Handler(next slog.Handler) slog.Handler {
	return &repeatHandler{r: r, next: next}
}

// Close writes the summaries still due and stops r's timers; it returns once no timer of r runs.
// Records handled after Close are all written.
func (r *Repeats) Close() {
	r.mu.Lock()
	r.closed = true
	var due []*repeatRun
	for k, run := range r.runs {
		if r.take(run) {
			due = append(due, run)
		}
		delete(r.runs, k)
	}
	r.mu.Unlock()
	for _, run := range due {
		run.h.summarize(run)
	}
	r.timers.Wait()
}

// take claims run's summary for the caller, and reports whether there is one to write. Called
// with r.mu held.
func (r *Repeats) take(run *repeatRun) bool {
	if run.suppressed == 0 || run.taken {
		return false
	}
	run.taken = true
	if run.timer.Stop() {
		r.timers.Done() // it will not fire
	}
	return true
}

// expire is run's timer: the window is over.
func (r *Repeats) expire(k repeatKey, run *repeatRun) {
	defer r.timers.Done()
	r.mu.Lock()
	if run.taken {
		r.mu.Unlock()
		return
	}
	run.taken = true
	if r.runs[k] == run {
		delete(r.runs, k)
	}
	r.mu.Unlock()
	run.h.summarize(run)
}

// sweep forgets the windows that ended with nothing counted, at most once a window, so that
// messages seen once do not pile up. Called with r.mu held.
func (r *Repeats) sweep(now time.Time) {
	if now.Sub(r.swept) < r.window {
		return
	}
	r.swept = now
	for k, run := range r.runs {
		if run.suppressed == 0 && !now.Before(run.end) {
			delete(r.runs, k)
		}
	}
}

type repeatHandler struct {
	r    *Repeats
	next slog.Handler
}

func (h *repeatHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

func (h *repeatHandler) Handle(ctx context.Context, rec slog.Record) error {
	r := h.r
	// A log that writes debug records (log.level debug) is being read whole, every line of it:
	// someone is looking at what happens, say at each retry, not at a journal filling up.
	if rec.Level < r.level.Level() || h.next.Enabled(ctx, slog.LevelDebug) {
		return h.next.Handle(ctx, rec)
	}
	now := time.Now()
	k := repeatKey{rec.Level, rec.Message}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return h.next.Handle(ctx, rec)
	}
	var over *repeatRun // a window that has ended, whose summary goes before rec
	run := r.runs[k]
	if run != nil && !now.Before(run.end) {
		if r.take(run) {
			over = run
		}
		run = nil
	}
	if run == nil {
		r.sweep(now)
		run = &repeatRun{end: now.Add(r.window)}
		r.runs[k] = run
	}
	write := run.written < r.burst
	if write {
		run.written++
	} else {
		run.suppressed++
		run.last = rec.Clone()
		run.h = h
		if run.timer == nil {
			r.timers.Add(1)
			run.timer = time.AfterFunc(run.end.Sub(now), func() { r.expire(k, run) })
		}
	}
	r.mu.Unlock()
	if over != nil {
		over.h.summarize(over)
	}
	if !write {
		return nil
	}
	return h.next.Handle(ctx, rec)
}

// summarize writes run's summary. Its count and record are final: run was taken.
func (h *repeatHandler) summarize(run *repeatRun) {
	s := slog.NewRecord(time.Now(), run.last.Level, run.last.Message, run.last.PC)
	run.last.Attrs(func(a slog.Attr) bool {
		s.AddAttrs(a)
		return true
	})
	s.AddAttrs(slog.Int("suppressed", run.suppressed), slog.Duration("within", h.r.window))
	// Nowhere to report a failed write to: the handler under it had the same chance with the
	// records themselves.
	_ = h.next.Handle(context.Background(), s)
}

func (h *repeatHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	return &repeatHandler{r: h.r, next: h.next.WithAttrs(attrs)}
}

func (h *repeatHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return &repeatHandler{r: h.r, next: h.next.WithGroup(name)}
}
