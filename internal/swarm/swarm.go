package swarm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/protocol"
)

// Agent is what the swarm runs per device: a *device.Agent, or a fake in tests.
type Agent interface {
	// Run runs the device's session until ctx is cancelled, reconnecting as it needs; it returns
	// nil once ctx is done.
	Run(ctx context.Context) error
	// State is the session's live state, read for the status line.
	State() device.State
}

// Device is what Options.Build gets to build one device with: its identity and the hooks through
// which the swarm counts what it does. Build passes the hooks on to device.Options.
type Device struct {
	Index    int
	MAC      string // MAC(Plan.Prefix, Index)
	ClientID string // ClientID(MAC)

	Render     func(protocol.AIMessage) // counts the AI messages
	OnState    func(device.State)       // counts the registrations
	OnLineLost func(error)              // counts the lines lost
	OnCall     func(device.CallReport)
	// ConnState is the device's state as get_device_status reports it.
	ConnState func() string
}

// Options are a swarm's outputs and the builder of its devices.
type Options struct {
	// Build makes one device: its hardware, tools and agent. halt makes the hardware inert once
	// the agent has stopped; it may be nil. Build runs on the goroutine that then runs the
	// device, many at once.
	Build func(d *Device) (a Agent, halt func() error, err error)
	Out   io.Writer // status lines and the summary; nil discards them
	// Err gets the latest warning when it changes; nil discards it. Pass it through a redactor
	// if the logs may hold secrets.
	Err io.Writer
	// Terminal redraws the status line in place instead of printing one per interval.
	Terminal bool
	// Handler is where the devices' logs go (Logger); nil discards them. Warnings are kept for
	// the status line whatever its level.
	Handler slog.Handler
	// Talk, when set, sends the server tasks naming the swarm's devices, from the moment every
	// device has registered until the stop; the status lines and the summary count them.
	Talk *Talk
}

// Swarm is one run of many devices. New makes one; Run runs it, once.
type Swarm struct {
	plan     Plan
	opts     Options
	log      *slog.Logger
	problem  atomic.Pointer[string] // the latest warning any device logged
	devs     []swarmDevice          // allocated once: the status loop reads it while the launcher fills it
	template Device                 // the hooks every device shares, made once rather than per device

	start         time.Time
	registeredAny atomic.Int64 // devices that have registered at least once
	allRegistered atomic.Int64 // nanoseconds from start until the last of them did; 0 until then
	registrations atomic.Int64 // sessions registered, reconnections included
	lost          atomic.Int64 // lines lost other than by a stop
	callErrors    atomic.Int64 // calls answered with a JSON-RPC error
	messages      atomic.Int64 // mcp/ai/message notifications received
	calls         latencyHist
	ready         chan struct{} // closed once every device has registered
	talk          *talker       // nil: no tasks sent

	agents sync.WaitGroup // each device's Run
	err    atomic.Pointer[error]
}

// swarmDevice is what the swarm keeps per device: kept small, as there may be tens of thousands.
type swarmDevice struct {
	s          *Swarm
	agent      atomic.Pointer[Agent] // nil until launched
	registered atomic.Bool           // has registered at least once
}

// New makes a swarm of p's devices. o is copied; Build is required.
func New(p Plan, o *Options) (*Swarm, error) {
	if o == nil || o.Build == nil {
		return nil, errors.New("swarm: Options.Build is required")
	}
	s := &Swarm{plan: p, opts: *o, ready: make(chan struct{})}
	if o.Talk != nil {
		s.talk = newTalker(*o.Talk, p.N, func(i int) string { return MAC(p.Prefix, i) })
	}
	if s.opts.Out == nil {
		s.opts.Out = io.Discard
	}
	if s.opts.Err == nil {
		s.opts.Err = io.Discard
	}
	next := s.opts.Handler
	if next == nil {
		next = slog.DiscardHandler
	}
	s.log = slog.New(&problemHandler{next: next, last: &s.problem})
	s.devs = make([]swarmDevice, p.N)
	s.template = Device{
		Render: func(protocol.AIMessage) { s.messages.Add(1) },
		OnCall: func(r device.CallReport) {
			s.calls.add(r.Duration)
			if r.Code != 0 {
				s.callErrors.Add(1)
			}
		},
		OnLineLost: func(err error) {
			if err != nil {
				s.lost.Add(1)
			}
		},
	}
	return s, nil
}

// Logger is the logger the devices should log to: Options.Handler, with warnings kept for the
// status line.
func (s *Swarm) Logger() *slog.Logger { return s.log }

// Registered reports how many devices have registered at least once and, once all have, how long
// after the start the last one did (0 until then).
func (s *Swarm) Registered() (n int, all time.Duration) {
	return int(s.registeredAny.Load()), time.Duration(s.allRegistered.Load())
}

// Ready is closed once every device has registered at least once.
func (s *Swarm) Ready() <-chan struct{} { return s.ready }

// build makes device i through Options.Build.
func (s *Swarm) build(i int) (Agent, func() error, error) {
	d := &s.devs[i]
	d.s = s
	spec := s.template
	spec.Index = i
	spec.MAC = MAC(s.plan.Prefix, i)
	spec.ClientID = ClientID(spec.MAC)
	spec.OnState = d.onState
	spec.ConnState = d.connState
	a, halt, err := s.opts.Build(&spec)
	if err != nil {
		return nil, nil, fmt.Errorf("starting device %s: %w", spec.MAC, err)
	}
	return a, halt, nil
}

// onState is the device's OnState hook. It may run on the agent's goroutine or its line's read
// loop, so it only counts; the live state is read from the agent when a status line is made.
func (d *swarmDevice) onState(st device.State) {
	if st != device.Registered {
		return
	}
	s := d.s
	s.registrations.Add(1)
	if d.registered.CompareAndSwap(false, true) && s.registeredAny.Add(1) == int64(len(s.devs)) {
		s.allRegistered.Store(int64(max(time.Since(s.start), 1)))
		close(s.ready) // once: only the last device's first registration gets here
	}
}

// connState reports the device's state to get_device_status.
func (d *swarmDevice) connState() string {
	if a := d.agent.Load(); a != nil {
		return (*a).State().String()
	}
	return device.Idle.String()
}

// Run starts the devices, prints status lines until ctx is cancelled, stops every device, prints
// the summary and returns nil; an error only if the devices could not be built.
func (s *Swarm) Run(ctx context.Context) error {
	// Device 0 is built before anything dials, so settings the tools or the agent refuse fail
	// here, alone, with their message.
	a0, halt0, err := s.build(0)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.start = time.Now()
	stopped := make(chan struct{})
	var talking sync.WaitGroup
	if s.talk != nil {
		talking.Go(func() { s.talk.run(ctx, s.ready) })
	}
	// The launcher owns the devices: it starts them on the ramp, then, once ctx is done, waits for
	// every one to have stopped, and for the tasks in flight.
	go func() {
		defer close(stopped)
		s.launch(ctx, cancel, a0, halt0)
		<-ctx.Done()
		s.agents.Wait()
		talking.Wait()
	}()
	s.report(ctx, stopped)
	if p := s.err.Load(); p != nil {
		return *p
	}
	return nil
}

// launch starts device i at start + i*ramp/n, on one timer: a goroutine per device waiting for
// its turn would cost as much as the device itself. Each device is built on the goroutine that
// then runs it: building (the tools' schemas) takes most of a millisecond of CPU, which would
// hold the ramp back if the launcher did it, and this way it uses every core.
func (s *Swarm) launch(ctx context.Context, cancel context.CancelFunc, a0 Agent, halt0 func() error) {
	n := s.plan.N
	timer := time.NewTimer(math.MaxInt64) // armed for each wait below
	defer timer.Stop()
	for i := range n {
		at := s.start.Add(time.Duration(float64(s.plan.Ramp) * float64(i) / float64(n)))
		if wait := time.Until(at); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-ctx.Done():
				return
			}
		}
		if ctx.Err() != nil {
			return
		}
		s.agents.Go(func() {
			a, halt := a0, halt0
			if i > 0 {
				var err error
				if a, halt, err = s.build(i); err != nil {
					// Device 0 was built from the same settings, so this is not expected; a swarm
					// short of devices would measure the wrong thing, so stop.
					if s.err.CompareAndSwap(nil, &err) {
						cancel()
					}
					return
				}
			}
			s.devs[i].agent.Store(&a)
			// Run returns nil once ctx is cancelled; it has no other way to end.
			if err := a.Run(ctx); err != nil {
				s.log.Error("device stopped", "err", err)
			}
			// Inert like a real device's parts at exit; the simulated ones only mute.
			if halt != nil {
				if err := halt(); err != nil {
					s.log.Warn("halting simulated hardware", "err", err)
				}
			}
		})
	}
}

// report prints a status line every interval until stopped is closed, and then the summary. The
// lines go on while the devices stop, so a slow drain is visible.
func (s *Swarm) report(ctx context.Context, stopped <-chan struct{}) {
	tick := time.NewTicker(s.plan.Interval)
	defer tick.Stop()
	var prev snapshot
	shown := ""
	done := ctx.Done()
	for {
		select {
		case <-tick.C:
		case <-done:
			done = nil // a nil channel: from now on, wait for the devices to stop
			continue
		case <-stopped:
			s.status(&prev, &shown)
			if s.opts.Terminal {
				io.WriteString(s.opts.Out, "\n")
			}
			s.summary()
			return
		}
		s.status(&prev, &shown)
	}
}

// snapshot is what the previous status line counted, so the next one can give its interval's.
type snapshot struct {
	calls, tasks histCounts
	taskTime     time.Duration // the tasks' elapsed time then
}

// status prints one status line: the latest warning first if it is new, then the counts.
func (s *Swarm) status(prev *snapshot, shown *string) {
	out := s.opts.Out
	if p := s.problem.Load(); p != nil && *p != *shown {
		*shown = *p
		if s.opts.Terminal {
			io.WriteString(out, "\r\x1b[K") // the status line is redrawn below the warning
		}
		fmt.Fprintf(s.opts.Err, "devicectl swarm: latest warning: %s\n", *p)
	}
	var cur snapshot
	s.calls.snapshot(&cur.calls)
	if s.talk != nil {
		s.talk.lat.snapshot(&cur.tasks)
		cur.taskTime = s.talk.elapsed()
	}
	line := s.statusLine(time.Since(s.start), &cur, prev)
	*prev = cur
	if s.opts.Terminal {
		// Redraw in place with line wrapping off, so a line wider than the terminal is cut at the
		// edge instead of wrapping and leaving a copy behind each time.
		fmt.Fprintf(out, "\r\x1b[?7l%s\x1b[K\x1b[?7h", line)
	} else {
		fmt.Fprintln(out, line)
	}
}

// states counts the devices by the live state of their agents.
type states struct{ connected, registered, backingOff int }

func (s *Swarm) states() states {
	var c states
	for i := range s.devs {
		a := s.devs[i].agent.Load()
		if a == nil {
			continue
		}
		switch (*a).State() {
		case device.Registered:
			c.registered++
			c.connected++
		case device.Registering, device.Stopping: // the line is up
			c.connected++
		case device.BackingOff:
			c.backingOff++
		}
	}
	return c
}

// statusLine is e.g. "12s  connected 50/50  registered 50/50  calls 120 (+10: p50 95.1µs p99
// 1.2ms max 1.3ms)", with backing off, lost, errors and messages added when not zero, then the
// tasks when the swarm talks (talkStatus).
func (s *Swarm) statusLine(elapsed time.Duration, cur, prev *snapshot) string {
	interval := cur.calls.minus(&prev.calls)
	total := cur.calls.total()
	st := s.states()
	n := len(s.devs)
	var b strings.Builder
	prec := time.Second
	if s.plan.Interval < time.Second {
		prec = 100 * time.Millisecond
	}
	fmt.Fprintf(&b, "%s  connected %d/%d  registered %d/%d  calls %d (+%d", elapsed.Round(prec), st.connected, n, st.registered, n, total, interval.total())
	if interval.total() > 0 {
		// The interval's max is read from the histogram too (its top bucket): an exact one would
		// need a second counter kept in step with the snapshots.
		fmt.Fprintf(&b, ": p50 %s p99 %s max %s", shortDuration(interval.quantile(0.5, math.MaxInt64)),
			shortDuration(interval.quantile(0.99, math.MaxInt64)), shortDuration(interval.quantile(1, math.MaxInt64)))
	}
	b.WriteString(")")
	for _, x := range []struct {
		name string
		v    int64
	}{{"backing off", int64(st.backingOff)}, {"lost", s.lost.Load()}, {"errors", s.callErrors.Load()}, {"messages", s.messages.Load()}} {
		if x.v != 0 {
			fmt.Fprintf(&b, "  %s %d", x.name, x.v)
		}
	}
	if s.talk != nil {
		s.talkStatus(&b, cur, prev)
	}
	return b.String()
}

// talkStatus adds the tasks to a status line: "  tasks 1200 (+600, 600/s: p50 1.2ms p90 2ms p99
// 5ms)", then behind and failed (by kind) when not zero; "  tasks waiting for every device to
// register" before they start.
func (s *Swarm) talkStatus(b *strings.Builder, cur, prev *snapshot) {
	k := s.talk
	if k.started.Load() == 0 {
		b.WriteString("  tasks waiting for every device to register")
		return
	}
	interval := cur.tasks.minus(&prev.tasks)
	n := interval.total()
	fmt.Fprintf(b, "  tasks %d (+%d", cur.tasks.total(), n)
	if dt := cur.taskTime - prev.taskTime; dt > 0 {
		fmt.Fprintf(b, ", %.0f/s", float64(n)/dt.Seconds())
	}
	if n > 0 {
		fmt.Fprintf(b, ": p50 %s p90 %s p99 %s", shortDuration(interval.quantile(0.5, math.MaxInt64)),
			shortDuration(interval.quantile(0.9, math.MaxInt64)), shortDuration(interval.quantile(0.99, math.MaxInt64)))
	}
	b.WriteString(")")
	if v := k.behind.Load(); v != 0 {
		fmt.Fprintf(b, "  behind %d", v)
	}
	if n, kinds := k.errorKinds(); n != 0 {
		fmt.Fprintf(b, "  failed %d (%s)", n, kinds)
	}
}

// summary prints the totals of the run.
func (s *Swarm) summary() {
	out := s.opts.Out
	n := len(s.devs)
	fmt.Fprintf(out, "swarm stopped after %s: %d devices\n", time.Since(s.start).Round(time.Millisecond), n)
	if at := s.allRegistered.Load(); at > 0 {
		fmt.Fprintf(out, "  registered  all %d, %s after the start", n, shortDuration(time.Duration(at)))
	} else {
		fmt.Fprintf(out, "  registered  %d of %d at least once", s.registeredAny.Load(), n)
	}
	fmt.Fprintf(out, "; %d registrations, %d lines lost\n", s.registrations.Load(), s.lost.Load())
	var all histCounts
	s.calls.snapshot(&all)
	fmt.Fprintf(out, "  calls       %d", all.total())
	if all.total() > 0 {
		m := time.Duration(s.calls.max.Load())
		fmt.Fprintf(out, ": p50 %s, p99 %s, max %s", shortDuration(all.quantile(0.5, m)), shortDuration(all.quantile(0.99, m)), shortDuration(m))
	}
	fmt.Fprintf(out, "; %d answered with an error\n", s.callErrors.Load())
	fmt.Fprintf(out, "  messages    %d\n", s.messages.Load())
	if s.talk != nil {
		s.talkSummary()
	}
	if p := s.problem.Load(); p != nil {
		fmt.Fprintf(s.opts.Err, "devicectl swarm: latest warning: %s\n", *p)
	}
}

// talkSummary prints the tasks' totals: the rate over the time they were due, the latency
// percentiles of the completed ones, and what became of the others.
func (s *Swarm) talkSummary() {
	out, k := s.opts.Out, s.talk
	if k.started.Load() == 0 {
		fmt.Fprintf(out, "  tasks       none sent: not every device registered\n")
		return
	}
	var all histCounts
	k.lat.snapshot(&all)
	took := k.elapsed()
	done := all.total()
	fmt.Fprintf(out, "  tasks       %d completed in %s, %.1f/s (%s %s at %g/s, %d callers)", done, took.Round(time.Millisecond),
		float64(done)/max(took.Seconds(), 1e-9), k.t.Route, k.t.URL.Path, k.t.Rate, k.t.Callers)
	if done > 0 {
		m := time.Duration(k.lat.max.Load())
		fmt.Fprintf(out, ": p50 %s, p90 %s, p99 %s, max %s", shortDuration(all.quantile(0.5, m)),
			shortDuration(all.quantile(0.9, m)), shortDuration(all.quantile(0.99, m)), shortDuration(m))
	}
	fmt.Fprintf(out, "\n              %d sent, %d behind (every caller busy), %d cut short by the stop", k.sent.Load(), k.behind.Load(), k.interrupted.Load())
	n, kinds := k.errorKinds()
	fmt.Fprintf(out, "; %d failed", n)
	if n > 0 {
		fmt.Fprintf(out, ": %s", kinds)
	}
	fmt.Fprintln(out)
	if n > 0 {
		// The server's words are its own: quoted, so a control byte in them cannot drive the
		// terminal.
		fmt.Fprintf(out, "              latest failure: %q\n", k.latestFailure())
	}
}
