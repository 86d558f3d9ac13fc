package hooks

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Event names, as used in the config (hooks.<event>) and in DEVICECTL_EVENT.
type Event string

const (
	Connected    Event = "connected"     // the WebSocket line to the server is up
	Registered   Event = "registered"    // the server accepted mcp/registerTools
	Disconnected Event = "disconnected"  // a line that was up is gone
	ToolExecuted Event = "tool_executed" // a tool call from the server ran and was answered
	FinalReply   Event = "final_reply"   // the AI's reply ended (mcp/ai/message type final)
)

// Events lists the events in the order they are documented, for config keys and docs.
var Events = []Event{Connected, Registered, Disconnected, ToolExecuted, FinalReply}

// DefaultTimeout bounds each run of a hook when Options do not.
const DefaultTimeout = 10 * time.Second

// DefaultQueueSize is how many events may wait behind the running hook when Options do not say.
const DefaultQueueSize = 64

// Options configure New. A nil *Options is the zero value: no hooks, a Runner that does nothing.
// New copies it; the caller's struct, maps and slices are never changed nor kept.
type Options struct {
	// Commands is the argv, program first, to run for each event; events without one fire
	// nothing. The program is looked up (through PATH when it has no slash) by New.
	Commands map[Event][]string
	// Timeout bounds each run; 0 means DefaultTimeout. A hook still running then is killed with
	// every process in its process group, as are those left in the group when a hook exits.
	Timeout time.Duration
	// QueueSize bounds the events waiting behind the running hook; 0 means DefaultQueueSize.
	// When it is full the oldest waiting event is dropped, with a warning.
	QueueSize int
	// Env is the environment hooks start from, before the DEVICECTL_ variables of the event are
	// added; any DEVICECTL_ variable already in it is removed. nil means os.Environ() as it is
	// when New is called.
	Env []string
	// Common are the variables every event carries, KEY -> value as for Runner.Fire, e.g.
	// {"SERVER": url, "MAC": mac}. An event's own variables win over these.
	Common map[string]string
	// Logger receives failed hooks (warn), dropped events (warn) and runs (debug); nil discards.
	Logger *slog.Logger
}

// withDefaults returns a copy of o with the defaults filled in and nothing shared with the
// caller's struct.
func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	c.Commands = make(map[Event][]string, len(c.Commands))
	if o != nil {
		for ev, argv := range o.Commands {
			c.Commands[ev] = slices.Clone(argv)
		}
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.QueueSize == 0 {
		c.QueueSize = DefaultQueueSize
	}
	if c.Env == nil {
		c.Env = os.Environ()
	} else {
		c.Env = slices.Clone(c.Env)
	}
	c.Common = maps.Clone(c.Common)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Runner runs the configured hooks, one at a time in the order their events were fired. Its
// methods are safe for concurrent use, and do nothing on a nil *Runner.
type Runner struct {
	hooks   map[Event]hook // read-only after New
	timeout time.Duration
	limit   int
	env     []string          // the base environment, without DEVICECTL_ variables
	common  map[string]string // Options.Common with its invalid keys already dropped
	log     *slog.Logger

	// stop is the parent of every run's context. Close cancels it (abort) when its own context
	// ends first: that kills the running hook, and tells the worker to drop the queue.
	stop  context.Context
	abort context.CancelFunc
	wake  chan struct{} // capacity 1: an event was queued, or Close was called
	done  chan struct{} // closed when the worker has returned; nil if there is no worker

	mu        sync.Mutex
	queue     []event
	closed    bool
	dropped   int   // events dropped because the queue was full, for the log
	abandoned int   // runs killed and events dropped because Close stopped waiting
	abortErr  error // why Close stopped waiting
}

// hook is the command of one event.
type hook struct {
	name string   // argv[0] as configured, for logs and the program's own argv[0]
	path string   // argv[0] as found by New, absolute so a later chdir cannot change it
	args []string // argv[1:]
}

// event is one firing, waiting to run.
type event struct {
	ev   Event
	at   time.Time
	vars map[string]string // the caller's, copied: Fire's caller may reuse its map
}

// CommandError is New's error about the command of one event, so that a caller can name the
// config key to blame (hooks.<Event>) without parsing a message.
type CommandError struct {
	Event Event // as configured; for an unknown event, the unknown name
	Err   error // what is wrong, without the event
}

func (e *CommandError) Error() string { return "hooks: " + string(e.Event) + ": " + e.Err.Error() }

func (e *CommandError) Unwrap() error { return e.Err }

// New checks opts.Commands and returns a Runner that runs them, with its one worker goroutine
// started; Close stops it. Every program must be found now, so that a misconfigured device fails
// at start-up instead of silently never running its hook. Such an error is a *CommandError
// naming the event; for a program not found it names the program too and wraps the error of
// exec.LookPath: exec.ErrNotFound for a name looked up in PATH, fs.ErrNotExist for a path that
// does not exist, fs.ErrPermission for a file that may not be executed. A key that is not one of
// Events is an error, as is an empty argv or program name. A negative Timeout or QueueSize is an
// error too. With no commands at all the Runner does nothing and has no goroutine.
func New(opts *Options) (*Runner, error) {
	o := opts.withDefaults()
	if o.Timeout < 0 {
		return nil, fmt.Errorf("hooks: timeout %v: want a positive duration, or 0 for %v", o.Timeout, DefaultTimeout)
	}
	if o.QueueSize < 0 {
		return nil, fmt.Errorf("hooks: queue size %d: want a positive number, or 0 for %d", o.QueueSize, DefaultQueueSize)
	}
	log := o.Logger.With("component", "hooks")
	hooks := make(map[Event]hook, len(o.Commands))
	// In Events order, so that which error a config with several mistakes gets is stable.
	for _, ev := range sortedEvents(o.Commands) {
		argv := o.Commands[ev]
		if !slices.Contains(Events, ev) {
			return nil, &CommandError{ev, fmt.Errorf("not an event (want one of %s)", eventList())}
		}
		if len(argv) == 0 {
			return nil, &CommandError{ev, errors.New("no command (leave the event out to run nothing)")}
		}
		if argv[0] == "" {
			return nil, &CommandError{ev, errors.New("empty program name")}
		}
		path, err := exec.LookPath(argv[0])
		if err != nil {
			return nil, &CommandError{ev, fmt.Errorf("program %q: %w", argv[0], err)}
		}
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		hooks[ev] = hook{name: argv[0], path: path, args: argv[1:]}
	}
	r := &Runner{
		hooks:   hooks,
		timeout: o.Timeout,
		limit:   o.QueueSize,
		env:     slices.DeleteFunc(o.Env, isOurs),
		common:  validVars(o.Common, log, "common"),
		log:     log,
		wake:    make(chan struct{}, 1),
	}
	if len(hooks) == 0 {
		return r, nil
	}
	r.stop, r.abort = context.WithCancel(context.Background())
	r.done = make(chan struct{})
	go r.work()
	return r, nil
}

// sortedEvents returns the keys of m, the known events first in Events order, then the others
// sorted.
func sortedEvents(m map[Event][]string) []Event {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b Event) int {
		ia, ib := slices.Index(Events, a), slices.Index(Events, b)
		switch {
		case ia >= 0 && ib >= 0:
			return ia - ib
		case ia >= 0:
			return -1
		case ib >= 0:
			return 1
		}
		return strings.Compare(string(a), string(b))
	})
	return keys
}

func eventList() string {
	s := make([]string, len(Events))
	for i, ev := range Events {
		s[i] = string(ev)
	}
	return strings.Join(s, ", ")
}

// Has reports whether ev has a command, so that a caller can skip building details for an event
// nobody listens to. It does not change after New (Close aside, Fire runs what Has reports).
func (r *Runner) Has(ev Event) bool {
	if r == nil {
		return false
	}
	_, ok := r.hooks[ev]
	return ok
}

// Fire queues ev, with its variables, to run after the events fired before it, and returns at
// once: the caller is the agent's network loop or a tool call, which a slow hook must never hold
// up. vars are KEY -> value, the key without the DEVICECTL_ prefix (e.g. "TOOL":
// "amplify_volume"); Fire copies the map. An event without a command, a nil *Runner and a Runner
// being closed do nothing. If QueueSize events are already waiting, the oldest is dropped and a
// warning logged: when hooks fall that far behind, the newest events matter most.
func (r *Runner) Fire(ev Event, vars map[string]string) {
	if !r.Has(ev) {
		return
	}
	e := event{ev: ev, at: time.Now(), vars: maps.Clone(vars)}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		r.log.Debug("closed; event not run", "event", ev)
		return
	}
	var lost Event
	var dropped int
	if len(r.queue) >= r.limit {
		lost = r.queue[0].ev
		r.queue[0] = event{} // let its vars go
		r.queue = r.queue[1:]
		r.dropped++
		dropped = r.dropped
	}
	r.queue = append(r.queue, e)
	r.mu.Unlock()
	if dropped > 0 {
		// Logged outside the lock: a slow log handler must not stall the other callers of Fire.
		r.log.Warn("hook queue full; dropped the oldest event",
			"dropped_event", lost, "event", ev, "queue_size", r.limit, "dropped_total", dropped)
	}
	r.signal()
}

func (r *Runner) signal() {
	select {
	case r.wake <- struct{}{}:
	default: // a wake-up is already pending; the worker will see this event too
	}
}

// Close stops taking events and waits for the queued and running hooks to finish. If ctx ends
// first it kills the running hook (its process group) and drops the queued events, with a
// warning, and returns an error wrapping ctx's error; otherwise nil. Either way it returns once
// the Runner's goroutine has. Failed hooks are not Close's error: they were logged. Close may be
// called more than once, concurrently too; each call returns once the goroutine is gone.
func (r *Runner) Close(ctx context.Context) error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	if r.done == nil {
		return nil // no hooks, no goroutine
	}
	r.signal()
	select {
	case <-r.done:
	case <-ctx.Done():
		r.mu.Lock()
		if r.abortErr == nil {
			r.abortErr = ctx.Err()
		}
		r.mu.Unlock()
		r.abort()
		<-r.done // a killed hook ends within waitDelay
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.abandoned > 0 {
		return fmt.Errorf("hooks: closed before %d event(s) ran to completion: %w", r.abandoned, r.abortErr)
	}
	return nil
}

// work is the Runner's one goroutine: it runs the queued events in order until Close.
func (r *Runner) work() {
	defer close(r.done)
	defer r.abort() // releases r.stop; nothing runs under it any more
	for {
		r.mu.Lock()
		if r.stop.Err() != nil && len(r.queue) > 0 {
			lost := make([]Event, len(r.queue))
			for i, e := range r.queue {
				lost[i] = e.ev
			}
			r.queue = nil
			r.abandoned += len(lost)
			r.mu.Unlock()
			r.log.Warn("closing; dropped the events still queued", "count", len(lost), "events", lost)
			continue
		}
		if len(r.queue) == 0 {
			closed := r.closed
			r.mu.Unlock()
			if closed {
				return
			}
			<-r.wake
			continue
		}
		e := r.queue[0]
		r.queue[0] = event{}
		r.queue = r.queue[1:]
		r.mu.Unlock()

		if killed := r.run(e); killed {
			r.mu.Lock()
			r.abandoned++
			r.mu.Unlock()
		}
	}
}
