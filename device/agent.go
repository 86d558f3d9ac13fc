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

	"github.com/sourcegraph/jsonrpc2"

	"github.com/devicectl/devicectl/tools"
	"github.com/devicectl/devicectl/transport"
)

// Options configure an Agent. Zero fields take the defaults noted beside them.
type Options struct {
	URL      string // ws:// or wss:// address of the agent server
	MAC      string // AA-BB-CC-DD-EE-FF, sent in mcp/registerTools and as Device-Id
	ClientID string // sent as Client-Id; stable across restarts (see LoadClientID)
	Version  string // sent as User-Agent: devicectl/<Version>

	// Dial carries the token, TLS, read limit and keepalive settings; the agent adds the
	// handshake headers. Nil means defaults.
	Dial *transport.DialOptions

	Registry *tools.Registry // the tools to declare and serve

	// Render receives every mcp/ai/message in arrival order, never concurrently; nil discards.
	Render func(AIMessage)

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
	Code     int64         // the JSON-RPC error code sent (CodeToolFailed, ...); 0 on success
	Message  string        // the error message sent; "" on success
	Duration time.Duration // from admission to the answer
}

// Agent is the device side of the protocol: it keeps one session with the server alive, declares
// the registry's tools on every connection, runs the server's calls and renders its messages.
type Agent struct {
	cur   atomic.Pointer[Options] // the options in force; replaced between sessions by Restart
	log   *slog.Logger
	disp  *dispatcher // for the agent's life: its hardware semaphores outlast a session
	state atomic.Int32
	rand  func() float64
	regID atomic.Uint64
	once  sync.Once // Run may be called once

	// Restart and SetRegistry hand their work to the session loop through these: next holds the
	// options of a pending Restart, and the channels (capacity 1) wake the loop.
	mu        sync.Mutex // serialises Restart and SetRegistry
	next      atomic.Pointer[Options]
	restartCh chan struct{}
	reregCh   chan struct{}
	done      atomic.Bool // Run has returned

	// For Check: when the state last changed, how long the current back-off is, and the line.
	since  atomic.Int64 // unix nanoseconds
	wait   atomic.Int64 // nanoseconds
	stream atomic.Pointer[transport.Stream]
}

// New checks opts and returns an Agent ready to Run.
func New(opts *Options) (*Agent, error) {
	o, err := checkOptions(opts)
	if err != nil {
		return nil, err
	}
	a := &Agent{
		log:       o.Logger.With("component", "agent"),
		rand:      defaultRand,
		restartCh: make(chan struct{}, 1),
		reregCh:   make(chan struct{}, 1),
	}
	a.cur.Store(o)
	a.disp = newDispatcher(o)
	return a, nil
}

// checkOptions copies opts with the defaults filled in, or says what is wrong with them.
func checkOptions(opts *Options) (*Options, error) {
	if opts == nil {
		return nil, errors.New("device: nil options")
	}
	o := *opts
	switch {
	case o.URL == "":
		return nil, errors.New("device: no server URL")
	case !strings.HasPrefix(o.URL, "ws://") && !strings.HasPrefix(o.URL, "wss://"):
		return nil, fmt.Errorf("device: server URL %q: want ws:// or wss://", o.URL)
	case o.Registry == nil:
		return nil, errors.New("device: no tool registry")
	}
	mac, err := NormalizeMAC(o.MAC)
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
		o.Sleep = sleepTimer
	}
	if o.Render == nil {
		o.Render = func(AIMessage) {}
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

// opts returns the options in force.
func (a *Agent) opts() *Options { return a.cur.Load() }

// SetRegistry makes reg the tools the device serves from now on: calls that arrive after it
// returns run reg's tools. When reg declares something else than what the server was last sent
// (a tool added, removed or described anew), the tools are registered again on the line that is
// up; a server that refuses them ends the session, and the next one registers from scratch.
// Safe to call from any goroutine, before or during Run.
func (a *Agent) SetRegistry(reg *tools.Registry) {
	if reg == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	o := *a.opts()
	o.Registry = reg
	a.cur.Store(&o)
	if next := a.next.Load(); next != nil {
		n := *next
		n.Registry = reg
		a.next.Store(&n)
	}
	a.disp.setRegistry(reg)
	kick(a.reregCh)
}

// Restart replaces every option (server, identity, credentials, limits, tools) and starts a new
// session with them at once, without back-off: a line that is up is closed the way a stop closes
// it (running calls may finish within the old DrainTimeout, close 1000), and a back-off wait is
// cut short. opts are checked as New checks them; on an error nothing changes. Sleep and OnState
// are taken from opts as well, so pass the same ones. It returns at once; the new session follows.
func (a *Agent) Restart(opts *Options) error {
	o, err := checkOptions(opts)
	if err != nil {
		return err
	}
	if a.done.Load() {
		return errors.New("device: Restart after Run returned")
	}
	a.mu.Lock()
	a.next.Store(o)
	a.mu.Unlock()
	kick(a.restartCh)
	return nil
}

// kick wakes whoever waits on ch, or leaves a wake-up there for the next wait.
func kick(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// applyRestart puts a pending Restart's options in force. Called by Run's goroutine between
// sessions.
func (a *Agent) applyRestart() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	o := a.next.Swap(nil)
	if o == nil {
		return false
	}
	a.cur.Store(o)
	a.log = o.Logger.With("component", "agent")
	a.disp.configure(o)
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
func (a *Agent) State() State { return State(a.state.Load()) }

func (a *Agent) setState(s State) {
	if State(a.state.Swap(int32(s))) == s {
		return
	}
	a.since.Store(time.Now().UnixNano())
	if on := a.opts().OnState; on != nil {
		on(s)
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
	st := a.State()
	in := time.Since(time.Unix(0, a.since.Load()))
	o := a.opts()
	var bound time.Duration
	switch st {
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
		bound = time.Duration(a.wait.Load())
	case Stopping:
		// The drain, stop's grace for cancelled calls, and a close handshake with a peer that may
		// not answer (coder/websocket waits up to 5s to write and 5s to read it).
		bound = o.DrainTimeout + 11*time.Second
	case Registered:
		s := a.stream.Load()
		ping, timeout := o.Dial.PingInterval, o.Dial.PingTimeout
		if s == nil || ping < 0 {
			return nil // no keepalive: nothing to judge the line by
		}
		if ping == 0 {
			ping = transport.DefaultPingInterval
		}
		if timeout <= 0 {
			timeout = transport.DefaultPingTimeout
		}
		if quiet := time.Since(s.LastHeard()); quiet > ping+timeout+healthSlack {
			return fmt.Errorf("registered, but nothing heard from the server for %s", quiet.Round(time.Millisecond))
		}
		return nil
	}
	if in > bound+healthSlack {
		return fmt.Errorf("%s for %s, longer than its bound of %s", st, in.Round(time.Millisecond), bound)
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
	defer a.done.Store(true)
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
		registeredFor, err := a.session(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, errRestart) {
			continue // at once: the line was closed on purpose
		}
		o := a.opts()
		if registeredFor >= o.Backoff.ResetAfter {
			attempt = 0
		}
		wait := o.Backoff.delay(attempt, a.rand)
		attempt++
		a.wait.Store(int64(wait))
		a.setState(BackingOff)
		a.log.Warn("not connected; retrying", "err", err, "retry_in", wait.Round(time.Millisecond), "attempt", attempt)
		if !a.backOff(ctx, o, wait) {
			return nil
		}
	}
}

// errRestart ends a session that Restart asked to replace.
var errRestart = errors.New("reconnecting with new settings")

// backOff waits d, or less when a Restart comes, and reports whether to go on (false: stopped).
func (a *Agent) backOff(ctx context.Context, o *Options, d time.Duration) bool {
	wait, restarted := a.watchRestart(ctx)
	err := o.Sleep(wait, d)
	if restarted() {
		return ctx.Err() == nil
	}
	return err == nil && ctx.Err() == nil
}

// session runs one connection from dial to loss. It reports how long the session was registered
// (zero if it never was) and why it ended.
func (a *Agent) session(ctx context.Context) (time.Duration, error) {
	o := a.opts()
	a.setState(Connecting)
	// A Restart cuts a dial or a registration short: a server that does not answer is often why
	// the settings were changed.
	setup, endSetup := a.watchRestart(ctx)
	stream, err := transport.Dial(setup, o.URL, o.Dial)
	if err != nil {
		if endSetup() {
			return 0, errRestart
		}
		return 0, fmt.Errorf("connecting to %s: %w", o.URL, err)
	}
	registeredFor, err := a.serve(ctx, o, stream, setup, endSetup)
	if o.OnLineLost != nil {
		lost := err
		if ctx.Err() != nil || errors.Is(err, errRestart) {
			lost = nil
		}
		o.OnLineLost(lost)
	}
	return registeredFor, err
}

// watchRestart returns a context that a Restart cancels, and the func that ends it and reports
// whether a Restart came. Call end once the wait (a dial and registration, a back-off) is over.
// A late wake-up of a Restart already applied is no Restart.
func (a *Agent) watchRestart(ctx context.Context) (setup context.Context, end func() bool) {
	ctx, cancel := context.WithCancel(ctx)
	restarted := make(chan struct{})
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-a.restartCh:
				if a.next.Load() != nil {
					close(restarted)
					cancel()
					return
				}
			case <-stop:
				return
			}
		}
	}()
	var once sync.Once
	return ctx, func() bool {
		once.Do(func() {
			close(stop)
			<-watched
			cancel()
		})
		select {
		case <-restarted:
			return true
		default:
			return false
		}
	}
}

// serve registers on the connected stream, then serves it until it is lost, ctx is cancelled or
// a Restart comes, and closes it.
func (a *Agent) serve(ctx context.Context, o *Options, stream *transport.Stream, setup context.Context, endSetup func() bool) (time.Duration, error) {
	a.stream.Store(stream)
	defer a.stream.Store(nil)
	a.disp.resume()
	// The jsonrpc2 connection's context is not ctx: a stop must let running calls finish and
	// answer before the line is closed, so the line outlives ctx by the drain.
	conn := transport.NewConn(context.Background(), stream, a.disp, o.Logger,
		jsonrpc2.OnRecv(a.noteRegistered))
	defer conn.Close()

	a.setState(Registering)
	declared, err := a.register(setup, conn)
	if endSetup() {
		a.stop(conn)
		return 0, errRestart
	}
	if err != nil {
		if ctx.Err() != nil {
			a.stop(conn)
		}
		return 0, err
	}
	registeredAt := time.Now()
	a.setState(Registered)
	a.log.Info("registered", "server", o.URL, "mac", o.MAC, "tools", len(declared))

	for {
		select {
		case <-conn.DisconnectNotify():
			err := stream.Err()
			if err == nil {
				err = errors.New("connection closed")
			}
			return time.Since(registeredAt), fmt.Errorf("connection lost: %w", err)
		case <-ctx.Done():
			a.stop(conn)
			return time.Since(registeredAt), nil
		case <-a.restartCh:
			if a.next.Load() == nil {
				continue // a late wake-up of a Restart this session already runs with
			}
			a.log.Info("reconnecting with new settings")
			a.stop(conn)
			return time.Since(registeredAt), errRestart
		case <-a.reregCh:
			if slices.EqualFunc(declared, a.opts().Registry.Declarations(), sameDeclaration) {
				continue // what the server has already
			}
			if declared, err = a.register(ctx, conn); err != nil {
				// Running calls still get to answer before the line is closed.
				a.stop(conn)
				if ctx.Err() != nil {
					return time.Since(registeredAt), nil
				}
				return time.Since(registeredAt), fmt.Errorf("registering the changed tools: %w", err)
			}
			a.log.Info("changed tools registered", "tools", len(declared))
		}
	}
}

// sameDeclaration compares two declarations as the server sees them: by their JSON.
func sameDeclaration(x, y tools.Declaration) bool {
	bx, errx := json.Marshal(x)
	by, erry := json.Marshal(y)
	return errx == nil && erry == nil && bytes.Equal(bx, by)
}

// noteRegistered runs in the connection's read loop. It marks the session registered as soon as
// the server's acceptance is read, before the read loop reads the server's next message: a server
// may call a tool right after accepting, and that call must already see the Registered state (in
// get_device_status, for one) although register's goroutine has not yet woken up.
func (a *Agent) noteRegistered(req *jsonrpc2.Request, resp *jsonrpc2.Response) {
	if req != nil && resp != nil && req.Method == MethodRegisterTools && resp.Error == nil && resp.Result != nil {
		a.setState(Registered)
	}
}

// register sends the registry's tools and waits for the server's answer. It returns what it
// declared, so a later SetRegistry can tell whether the server needs to hear of a change.
func (a *Agent) register(ctx context.Context, conn *jsonrpc2.Conn) ([]tools.Declaration, error) {
	o := a.opts()
	ctx, cancel := context.WithTimeout(ctx, o.RegisterTimeout)
	defer cancel()
	params := RegisterParams{MAC: o.MAC, Tools: o.Registry.Declarations()}
	id := jsonrpc2.ID{Str: "reg-" + strconv.FormatUint(a.regID.Add(1), 10), IsString: true}
	var res RegisterResult
	err := conn.Call(ctx, MethodRegisterTools, params, &res, jsonrpc2.PickID(id))
	var rpcErr *jsonrpc2.Error
	switch {
	case err == nil:
		a.log.Debug("registration accepted", "status", res.Status, "message", res.Message)
		return params.Tools, nil
	case errors.As(err, &rpcErr):
		return nil, fmt.Errorf("registration refused: %d %s", rpcErr.Code, rpcErr.Message)
	case errors.Is(err, context.DeadlineExceeded):
		return nil, fmt.Errorf("no answer to registration within %s", o.RegisterTimeout)
	default:
		return nil, fmt.Errorf("registering: %w", err)
	}
}

// stop drains running calls, then closes the line with status 1000.
func (a *Agent) stop(conn *jsonrpc2.Conn) {
	a.setState(Stopping)
	a.disp.stop()
	drainTimeout := a.opts().DrainTimeout
	drain, cancel := context.WithTimeout(context.Background(), drainTimeout)
	defer cancel()
	if !a.disp.wait(drain) {
		a.log.Warn("calls still running at stop; closing anyway", "drain_timeout", drainTimeout)
	}
	if err := conn.Close(); err != nil && !errors.Is(err, jsonrpc2.ErrClosed) {
		a.log.Debug("closing connection", "err", err)
	}
	// Closing cancelled the calls' contexts; give the ones that honour it a moment to return so
	// Run does not leave them behind.
	grace, cancel2 := context.WithTimeout(context.Background(), time.Second)
	defer cancel2()
	if !a.disp.wait(grace) {
		a.log.Warn("tools ignored cancellation at stop")
	}
}
