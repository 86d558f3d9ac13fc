package device

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/devicectl/devicectl/internal/sleep"
	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
	"github.com/devicectl/devicectl/transport"
)

// Options configure an Agent. Zero fields take the defaults noted beside them.
type Options struct {
	URL string // ws:// or wss:// address of the agent server
	// URLs are several agent servers (the nodes of a cluster), instead of URL: the first is
	// dialled first, and each session that fails or is lost moves on to the next, wrapping
	// around, with the back-off as usual; a server that serves is kept.
	URLs     []string
	MAC      string // AA-BB-CC-DD-EE-FF, sent in mcp/registerTools and as Device-Id
	ClientID string // sent as Client-Id; stable across restarts (see LoadClientID)
	Version  string // sent as User-Agent: devicectl/<Version>

	// Dial carries the token, TLS, read limit and keepalive settings; the agent adds the
	// handshake headers. Nil means defaults.
	Dial *transport.DialOptions

	Registry *tools.Registry // the tools to declare and serve

	// Render receives every mcp/ai/message in arrival order, never concurrently; nil discards.
	Render func(protocol.AIMessage)

	MaxInFlight     int           // calls running at once (default 8); more wait, up to MaxQueued
	MaxQueued       int           // calls waiting in arrival order beyond MaxInFlight (default 256; <0: none); past that -32002
	ToolTimeout     time.Duration // per call unless the tool sets its own (default 10s)
	DrainTimeout    time.Duration // how long a stop waits for running calls (default 5s)
	RegisterTimeout time.Duration // how long to wait for the registration answer (default 10s)
	Backoff         Backoff

	// Sleep waits between attempts; nil uses a real timer. Tests inject one that records the
	// waits and returns at once.
	Sleep func(ctx context.Context, d time.Duration) error

	Logger  *slog.Logger
	OnState func(State) // called on every change of state, from the agent's goroutine

	// OnLineLost is called, from the agent's goroutine, once for every line that was connected,
	// after it is closed: with why it was lost, or nil when the device closed it (a stop, or a
	// Restart). Together with OnState it tells an observer (event hooks) when the line was up.
	OnLineLost func(error)

	// OnCall is told of every call the device ran and answered, the server's and those of
	// Agent.Call, from that call's goroutine, after the answer was sent. Calls refused before
	// they ran (invalid params, busy) are not reported.
	OnCall func(CallReport)
}

// CallReport is one answered mcp/tool/execute, for Options.OnCall.
type CallReport struct {
	Tool     string
	Via      string // ViaServer or ViaLocal (Agent.Call)
	Input    json.RawMessage
	Result   any           // the result sent, as the tool returned it; nil for an error
	Code     int64         // the JSON-RPC error code sent (protocol.CodeServerError, ...); 0 on success
	Message  string        // the error message sent; "" on success
	Duration time.Duration // from admission to the answer
}

// Agent is the device side of the protocol: it keeps one session with the server alive, declares
// the registry's tools on every connection, runs the server's calls and renders its messages.
//
// Run's goroutine owns the session: the options in force, the line, the state and the back-off
// are read and written by it alone. Other goroutines hand it work through inbox (Restart,
// SetRegistry) and read the snapshot it publishes in view (State, Check). The dispatcher, which
// runs the calls on goroutines of its own, is shared with them.
type Agent struct {
	disp  *dispatcher // for the agent's life: its hardware semaphores outlast a session
	inbox chan change // capacity 1: the pending change, later ones folded in (see send)
	view  atomic.Pointer[status]
	ran   chan struct{} // closed when Run returns: nobody takes changes any more
	once  sync.Once     // Run may be called once
	// regMu serialises SetRegistry calls, so that the dispatcher and Run's goroutine end on the
	// same registry when two race.
	regMu sync.Mutex

	// Owned by Run's goroutine (set by New before it starts).
	opts  *Options // in force; replaced whole, never changed in place, for the snapshot shares it
	next  *Options // a Restart's, waiting for the session in progress to end
	log   *slog.Logger
	regID uint64 // the number of the last registration's id

	at int // the index in opts.URLs of the server the next session dials

	userID     atomic.Uint64 // the number of the last mcp/user/* request's id
	noVoiceMu  sync.Mutex
	noVoiceFor string // the server URL "does not take voice" was last said of
	now        func() time.Time
	rand       func() float64
}

// status is the snapshot Run's goroutine publishes for the others; it is replaced, never changed.
type status struct {
	state   State
	since   time.Time         // when state was entered
	wait    time.Duration     // the back-off being waited, while BackingOff
	opts    *Options          // in force, for Check's bounds
	server  string            // the URL of the line while one is up, or of the last one
	stream  *transport.Stream // the line while one is up, for Check's LastHeard
	line    *line             // the line while registered: the device's own requests go on it
	voice   serverVoice       // what the server said of voice when it accepted the registration
	changed chan struct{}     // closed when the next snapshot replaces it: a waiter wakes, not polls
}

// change is what Restart and SetRegistry hand to Run's goroutine.
type change struct {
	opts *Options        // a Restart's checked options; nil if none
	reg  *tools.Registry // a SetRegistry's registry, when opts is nil
}

// then folds next, which came later, into c.
func (c change) then(next change) change {
	switch {
	case next.opts != nil:
		return next // a Restart replaces everything before it
	case next.reg == nil:
		return c
	case c.opts != nil:
		o := *c.opts
		o.Registry = next.reg
		return change{opts: &o}
	default:
		return change{reg: next.reg}
	}
}

// New checks opts and returns an Agent ready to Run.
func New(opts *Options) (*Agent, error) {
	o, err := checkOptions(opts)
	if err != nil {
		return nil, err
	}
	a := &Agent{
		disp:  newDispatcher(o),
		inbox: make(chan change, 1),
		ran:   make(chan struct{}),
		opts:  o,
		log:   o.Logger.With("component", "agent"),
		now:   time.Now,
		rand:  defaultRand,
	}
	a.view.Store(&status{state: Idle, since: a.now(), opts: o, server: o.URLs[0], changed: make(chan struct{})})
	return a, nil
}

// checkOptions copies opts with the defaults filled in, or says what is wrong with them.
func checkOptions(opts *Options) (*Options, error) {
	if opts == nil {
		return nil, errors.New("device: nil options")
	}
	o := *opts
	servers := o.URLs
	if o.URL != "" {
		if len(o.URLs) > 0 {
			return nil, errors.New("device: both URL and URLs are set: give one server, or several")
		}
		servers = []string{o.URL}
	}
	if len(servers) == 0 {
		return nil, errors.New("device: no server URL")
	}
	for _, u := range servers {
		if !strings.HasPrefix(u, "ws://") && !strings.HasPrefix(u, "wss://") {
			return nil, fmt.Errorf("device: server URL %q: want ws:// or wss://", u)
		}
	}
	if o.Registry == nil {
		return nil, errors.New("device: no tool registry")
	}
	o.URL, o.URLs = "", slices.Clone(servers) // in force: the list, of one or more
	mac, err := protocol.ParseMAC(o.MAC)
	if err != nil {
		return nil, fmt.Errorf("device: %w", err)
	}
	o.MAC = mac
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = 8
	}
	if o.MaxQueued == 0 {
		o.MaxQueued = 256
	}
	if o.ToolTimeout <= 0 {
		o.ToolTimeout = 10 * time.Second
	}
	if o.DrainTimeout <= 0 {
		o.DrainTimeout = 5 * time.Second
	}
	if o.RegisterTimeout <= 0 {
		o.RegisterTimeout = 10 * time.Second
	}
	o.Backoff = o.Backoff.withDefaults()
	if o.Sleep == nil {
		o.Sleep = sleep.For
	}
	if o.Render == nil {
		o.Render = func(protocol.AIMessage) {}
	}
	if o.Logger == nil {
		o.Logger = discardLogger
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	var dial transport.DialOptions
	if o.Dial != nil {
		dial = *o.Dial
	}
	dial.Header = dial.Header.Clone()
	if dial.Header == nil {
		dial.Header = http.Header{}
	}
	dial.Header.Set("Device-Id", o.MAC)
	if o.ClientID != "" {
		dial.Header.Set("Client-Id", o.ClientID)
	}
	dial.Header.Set("User-Agent", "devicectl/"+o.Version)
	if dial.Logger == nil {
		dial.Logger = o.Logger // transport names its own component
	}
	o.Dial = &dial
	return &o, nil
}

// SetRegistry makes reg the tools the device serves from now on: calls that arrive after it
// returns run reg's tools. When reg declares something else than what the server was last sent
// (a tool added, removed or described anew), the tools are registered again on the line that is
// up; a server that refuses them ends the session, and the next one registers from scratch.
// Safe to call from any goroutine, before or during Run.
func (a *Agent) SetRegistry(reg *tools.Registry) {
	if reg == nil {
		return
	}
	a.regMu.Lock()
	defer a.regMu.Unlock()
	a.disp.setRegistry(reg)
	a.send(change{reg: reg})
}

// Restart replaces every option (server, identity, credentials, limits, tools) and starts a new
// session with them at once, without back-off: a line that is up is closed the way a stop closes
// it (running calls may finish within the old DrainTimeout, close 1000), and a dial, a
// registration or a back-off wait in progress is cut short. opts are checked as New checks them;
// on an error nothing changes. Sleep and OnState are taken from opts as well, so pass the same
// ones. It returns at once; the new session follows.
func (a *Agent) Restart(opts *Options) error {
	o, err := checkOptions(opts)
	if err != nil {
		return err
	}
	select {
	case <-a.ran:
		return errors.New("device: Restart after Run returned")
	default:
	}
	a.send(change{opts: o})
	return nil
}

// send leaves c for Run's goroutine without waiting: a change still pending there is taken out,
// c is folded into it, and the result put back, so the owner sees the newest settings whatever
// it was busy with.
func (a *Agent) send(c change) {
	for {
		select {
		case old := <-a.inbox:
			c = old.then(c)
		default:
		}
		select {
		case a.inbox <- c:
			return
		default: // another sender got there first: fold theirs in too
		}
	}
}

// take applies a change from the inbox: a registry at once (calls already run it, see
// SetRegistry), a Restart by keeping its options for when the session in progress has ended.
// It reports whether a Restart came. Run's goroutine only.
func (a *Agent) take(c change) bool {
	if c.opts != nil {
		a.next = c.opts
		return true
	}
	if c.reg != nil {
		o := *a.opts
		o.Registry = c.reg
		a.opts = &o
		if a.next != nil {
			n := *a.next
			n.Registry = c.reg
			a.next = &n
		}
	}
	return false
}

// applyRestart puts a pending Restart's options in force, between sessions, and reports whether
// there was one.
func (a *Agent) applyRestart() bool {
	select {
	case c := <-a.inbox:
		a.take(c)
	default:
	}
	o := a.next
	if o == nil {
		return false
	}
	a.next = nil
	a.opts = o
	a.at = 0
	a.log = o.Logger.With("component", "agent")
	a.disp.configure(o)
	a.publish(func(*status) {})
	return true
}

// Hold takes the named hardware resources (tools.Tool.Resources) the way a call does: it waits,
// until ctx is done, for the calls that drive them to finish, and keeps every new call on them
// waiting until release is called. Replacing a part goes: Hold, halt the old part, open the new
// one, SetRegistry, release; the calls that waited then run the new registry's tool.
func (a *Agent) Hold(ctx context.Context, resources []string) (release func(), err error) {
	return a.disp.acquire(ctx, resources)
}

// State reports where the session loop is; safe to call from any goroutine.
func (a *Agent) State() State { return a.view.Load().state }

// publish replaces the snapshot with a copy that edit changed. Run's goroutine only.
func (a *Agent) publish(edit func(*status)) {
	old := a.view.Load()
	s := *old
	s.opts = a.opts
	s.changed = make(chan struct{})
	edit(&s)
	a.view.Store(&s)
	close(old.changed)
}

// setState enters st and tells OnState. Run's goroutine only.
func (a *Agent) setState(st State) {
	if a.view.Load().state == st {
		return
	}
	a.publish(func(s *status) { s.state, s.since = st, a.now() })
	if on := a.opts.OnState; on != nil {
		on(st)
	}
}

// healthSlack is how far past its own bound a step may run before Check calls the loop stuck:
// scheduling on a loaded board, a slow DNS answer.
const healthSlack = time.Second

// Check reports whether the session loop is making progress, for a watchdog: nil while every
// step finishes within its bound (the handshake and registration timeouts, the back-off wait, the
// drain), and, once registered, while the server is heard from within a ping interval and
// timeout. A loop that is stuck, or a line that only looks open, is an error saying which.
func (a *Agent) Check() error {
	v := a.view.Load()
	in := a.now().Sub(v.since)
	o := v.opts
	var bound time.Duration
	switch v.state {
	case Idle, Stopped:
		return nil
	case Connecting:
		bound = o.Dial.HandshakeTimeout
		if bound <= 0 {
			bound = transport.DefaultHandshakeTimeout
		}
	case Registering:
		bound = o.RegisterTimeout
	case BackingOff:
		bound = v.wait
	case Stopping:
		// The drain, stop's grace for cancelled calls, and a close handshake with a peer that may
		// not answer (coder/websocket waits up to 5s to write and 5s to read it).
		bound = o.DrainTimeout + 11*time.Second
	case Registered:
		ping, timeout := o.Dial.PingInterval, o.Dial.PingTimeout
		if v.stream == nil || ping < 0 {
			return nil // no keepalive: nothing to judge the line by
		}
		if ping == 0 {
			ping = transport.DefaultPingInterval
		}
		if timeout <= 0 {
			timeout = transport.DefaultPingTimeout
		}
		// The transport stamps what it hears by the real clock.
		if quiet := time.Since(v.stream.LastHeard()); quiet > ping+timeout+healthSlack {
			return fmt.Errorf("registered, but nothing heard from the server for %s", quiet.Round(time.Millisecond))
		}
		return nil
	}
	if in > bound+healthSlack {
		return fmt.Errorf("%s for %s, longer than its bound of %s", v.state, in.Round(time.Millisecond), bound)
	}
	return nil
}

// Run connects, registers and serves until ctx is cancelled, reconnecting with back-off whenever
// the line is lost or registration fails. Cancelling ctx is a graceful stop: new calls are refused,
// running ones get DrainTimeout to finish, the line is closed with status 1000, and Run returns nil.
func (a *Agent) Run(ctx context.Context) error {
	first := false
	a.once.Do(func() { first = true })
	if !first {
		return errors.New("device: Agent.Run called twice")
	}
	defer close(a.ran)
	defer a.setState(Stopped)
	defer a.disp.close()
	// A stop refuses local calls (Agent.Call) too, from its first moment, so the final drain
	// waits only for the calls already running.
	defer context.AfterFunc(ctx, a.disp.close)()
	attempt := 0
	for {
		if a.applyRestart() {
			attempt = 0
		}
		served, err := a.session(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, errRestart) {
			continue // at once: the line was closed on purpose
		}
		if served {
			attempt = 0
		}
		wait := a.opts.Backoff.delay(attempt, a.rand)
		attempt++
		a.publish(func(s *status) { s.wait = wait })
		a.setState(BackingOff)
		// With several servers, the next try goes to the next one: this one failed, refused the
		// device, or lost its line.
		a.at = (a.at + 1) % len(a.opts.URLs)
		if transport.ClosedNormally(err) {
			// A server stopping or restarting closes its lines on purpose: no fault to warn of, and
			// no "retrying": one Ctrl-C often stops the server and this device together, and the
			// device's own stop may be a moment behind the server's close.
			a.log.Info("the server closed the line", "reason", err, "retry_in", wait.Round(time.Millisecond), "attempt", attempt, "next", a.opts.URLs[a.at])
		} else {
			a.log.Warn("not connected; retrying", "err", err, "retry_in", wait.Round(time.Millisecond), "attempt", attempt, "next", a.opts.URLs[a.at])
		}
		if !a.backOff(ctx, wait) {
			return nil
		}
	}
}

// errRestart ends a session that Restart asked to replace.
var errRestart = errors.New("reconnecting with new settings")

// backOff waits d, or less when a Restart comes, and reports whether to go on (false: stopped).
func (a *Agent) backOff(ctx context.Context, d time.Duration) bool {
	wait, cancel := context.WithCancel(ctx)
	defer cancel()
	slept := make(chan error, 1)
	pause := a.opts.Sleep
	go func() { slept <- pause(wait, d) }()
	for {
		select {
		case err := <-slept:
			return err == nil && ctx.Err() == nil
		case c := <-a.inbox:
			if a.take(c) {
				cancel()
				<-slept
				return ctx.Err() == nil
			}
		}
	}
}

// session runs one connection from dial to loss, and reports whether the line served (see
// Backoff.ResetAfter) and why it ended.
func (a *Agent) session(ctx context.Context) (served bool, err error) {
	a.setState(Connecting)
	url := a.opts.URLs[a.at]
	stream, err := a.dial(ctx, url)
	if errors.Is(err, errRestart) {
		return false, err
	}
	if err != nil {
		return false, err // transport's error names the URL, without its secrets
	}
	a.publish(func(s *status) { s.stream, s.server = stream, url })
	a.disp.resume()
	l := newLine(stream, a.disp, a.log)
	served, err = a.serve(ctx, l)
	l.close()
	a.publish(func(s *status) { s.stream, s.line, s.voice = nil, nil, serverVoice{} })
	if on := a.opts.OnLineLost; on != nil {
		lost := err
		if ctx.Err() != nil || errors.Is(err, errRestart) {
			lost = nil
		}
		on(lost)
	}
	return served, err
}

// dial connects to the server. A Restart cuts it short: a server that does not answer is often
// why the settings were changed.
func (a *Agent) dial(ctx context.Context, url string) (*transport.Stream, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type dialed struct {
		stream *transport.Stream
		err    error
	}
	ch := make(chan dialed, 1)
	opts := a.opts.Dial
	go func() {
		s, err := transport.Dial(ctx, url, opts)
		ch <- dialed{s, err}
	}()
	for {
		select {
		case d := <-ch:
			return d.stream, d.err
		case c := <-a.inbox:
			if a.take(c) {
				cancel()
				if d := <-ch; d.stream != nil {
					d.stream.Close()
				}
				return nil, errRestart
			}
		}
	}
}

// registration is an mcp/registerTools on the line, waiting for the server's answer.
type registration struct {
	req   *request
	tools []tools.Declaration // what it declares
	timer *time.Timer         // RegisterTimeout
}

// register sends the registry's tools on l.
func (a *Agent) register(l *line) (*registration, error) {
	a.regID++
	decls := a.opts.Registry.Declarations()
	req, err := l.call(registrationID(a.regID), protocol.MethodRegisterTools, registerParams(a.opts.MAC, decls))
	if err != nil {
		return nil, fmt.Errorf("registering: %w", err)
	}
	return &registration{req: req, tools: decls, timer: time.NewTimer(a.opts.RegisterTimeout)}, nil
}

// registrationID is the id of the agent's n-th mcp/registerTools: "reg-1" on its first
// connection, "reg-2" on the next, ...
func registrationID(n uint64) string { return "reg-" + strconv.FormatUint(n, 10) }

func registerParams(mac string, decls []tools.Declaration) protocol.RegisterParams[[]tools.Declaration] {
	return protocol.RegisterParams[[]tools.Declaration]{MAC: mac, Tools: decls}
}

// Registration returns the mcp/registerTools request an Agent with Options.MAC mac and a registry
// declaring decls sends first, byte for byte as the server receives it.
func Registration(mac string, decls []tools.Declaration) ([]byte, error) {
	id, err := json.Marshal(registrationID(1))
	if err != nil {
		return nil, err
	}
	return transport.EncodeRequest(id, protocol.MethodRegisterTools, registerParams(mac, decls))
}

// end stops waiting for r's answer; a no-op once it was received, or on a nil r.
func (r *registration) end(l *line) {
	if r == nil {
		return
	}
	r.timer.Stop()
	l.forget(r.req)
}

// answer reads the server's answer to a registration: nil for an acceptance, with what it says
// of voice.
func (r *registration) answer(m *transport.Message) (serverVoice, error) {
	if m.Error != nil {
		// The server says why in data.details (a MAC bound to another client, a limit): without
		// it the log would read only "Invalid params".
		var data protocol.ErrorData
		if m.Error.Data != nil && json.Unmarshal(*m.Error.Data, &data) == nil && data.Details != "" {
			return serverVoice{}, fmt.Errorf("registration refused: %d %s: %s", m.Error.Code, m.Error.Message, data.Details)
		}
		return serverVoice{}, fmt.Errorf("registration refused: %d %s", m.Error.Code, m.Error.Message)
	}
	return readFeatures(m.Result), nil
}

// serve registers on l, then serves it until it is lost, ctx is cancelled or a Restart comes. The
// line's read loop does the serving; this loop follows the session around it: the registration
// and its answer, a changed registry to register again, the end of the line. It reports whether
// the line served: it was registered and then answered a call, or stayed up Backoff.ResetAfter.
func (a *Agent) serve(ctx context.Context, l *line) (served bool, err error) {
	var (
		registered   bool
		registeredAt time.Time
		declared     []tools.Declaration // what the server accepted last
		reg          *registration       // the one waiting for its answer, if any
	)
	servedSoFar := func() bool {
		return registered && (l.answered.Load() || a.now().Sub(registeredAt) >= a.opts.Backoff.ResetAfter)
	}
	// failed ends the session over a registration that went wrong: the first one closes the line
	// at once (nothing was served), a later one lets running calls answer first.
	failed := func(err error) (bool, error) {
		// Released first: the read loop may be holding an answer for it, and the close below
		// waits for the loop.
		reg.end(l)
		if !registered {
			return false, err
		}
		a.stop(l)
		return servedSoFar(), fmt.Errorf("registering the changed tools: %w", err)
	}

	a.setState(Registering)
	reg, err = a.register(l)
	if err != nil {
		return false, err
	}
	defer func() { reg.end(l) }()
	for {
		var answered <-chan *transport.Message
		var expired <-chan time.Time
		if reg != nil {
			answered, expired = reg.req.answer, reg.timer.C
		}
		select {
		case m := <-answered:
			sv, err := reg.answer(m)
			if err == nil {
				a.publish(func(s *status) { s.line, s.voice = l, sv })
			}
			if err == nil && !registered {
				registered, registeredAt = true, a.now()
				a.setState(Registered)
			}
			// Only now may the read loop go on: a call right behind the acceptance must see the
			// session registered.
			reg.req.finish(true)
			reg.timer.Stop()
			if err != nil {
				return failed(err)
			}
			if declared == nil {
				a.log.Info("registered", "server", a.opts.URLs[a.at], "mac", a.opts.MAC, "tools", len(reg.tools))
			} else {
				a.log.Info("changed tools registered", "tools", len(reg.tools))
			}
			declared, reg = reg.tools, nil
			if !sameDeclarations(declared, a.opts.Registry.Declarations()) {
				// The registry changed while the server was deciding.
				if reg, err = a.register(l); err != nil {
					return failed(err)
				}
			}
		case <-expired:
			return failed(fmt.Errorf("no answer to registration within %s", a.opts.RegisterTimeout))
		case <-l.done:
			err := l.lost()
			if err == nil {
				err = errors.New("connection closed")
			}
			return servedSoFar(), fmt.Errorf("connection lost: %w", err)
		case <-ctx.Done():
			reg.end(l)
			a.stop(l)
			return servedSoFar(), nil
		case c := <-a.inbox:
			if a.take(c) {
				reg.end(l)
				a.log.Info("reconnecting with new settings")
				a.stop(l)
				return servedSoFar(), errRestart
			}
			if registered && reg == nil && !sameDeclarations(declared, a.opts.Registry.Declarations()) {
				if reg, err = a.register(l); err != nil {
					return failed(err)
				}
			}
		}
	}
}

// sameDeclarations compares two tool lists as the server sees them: by their JSON.
func sameDeclarations(x, y []tools.Declaration) bool {
	bx, errx := json.Marshal(x)
	by, erry := json.Marshal(y)
	return errx == nil && erry == nil && bytes.Equal(bx, by)
}

// stop drains running calls, then closes the line with status 1000.
func (a *Agent) stop(l *line) {
	a.setState(Stopping)
	a.disp.stop()
	drainTimeout := a.opts.DrainTimeout
	drain, cancel := context.WithTimeout(context.Background(), drainTimeout)
	defer cancel()
	if !a.disp.wait(drain) {
		a.log.Warn("calls still running at stop; closing anyway", "drain_timeout", drainTimeout)
	}
	l.close()
	// Closing cancelled the calls' contexts; give the ones that honour it a moment to return so
	// Run does not leave them behind.
	grace, cancel2 := context.WithTimeout(context.Background(), time.Second)
	defer cancel2()
	if !a.disp.wait(grace) {
		a.log.Warn("tools ignored cancellation at stop")
	}
}
