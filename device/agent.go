package device

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
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

	MaxInFlight     int           // calls running at once (default 8); more are answered -32002
	ToolTimeout     time.Duration // per call unless the tool sets its own (default 10s)
	DrainTimeout    time.Duration // how long a stop waits for running calls (default 5s)
	RegisterTimeout time.Duration // how long to wait for the registration answer (default 10s)
	Backoff         Backoff

	// Sleep waits between attempts; nil uses a real timer. Tests inject one that records the
	// waits and returns at once.
	Sleep func(ctx context.Context, d time.Duration) error

	Logger  *slog.Logger
	OnState func(State) // called on every change of state, from the agent's goroutine
}

// Agent is the device side of the protocol: it keeps one session with the server alive, declares
// the registry's tools on every connection, runs the server's calls and renders its messages.
type Agent struct {
	opts  Options
	log   *slog.Logger
	disp  *dispatcher
	state atomic.Int32
	rand  func() float64
	regID atomic.Uint64
	once  sync.Once // Run may be called once

	// For Check: when the state last changed, how long the current back-off is, and the line.
	since  atomic.Int64 // unix nanoseconds
	wait   atomic.Int64 // nanoseconds
	stream atomic.Pointer[transport.Stream]
}

// New checks opts and returns an Agent ready to Run.
func New(opts *Options) (*Agent, error) {
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

	a := &Agent{opts: o, log: o.Logger.With("component", "agent"), rand: defaultRand}
	a.disp = newDispatcher(o.Registry, o.Render, o.MaxInFlight, o.ToolTimeout, o.Logger.With("component", "dispatch"))
	return a, nil
}

// State reports where the session loop is; safe to call from any goroutine.
func (a *Agent) State() State { return State(a.state.Load()) }

func (a *Agent) setState(s State) {
	if State(a.state.Swap(int32(s))) == s {
		return
	}
	a.since.Store(time.Now().UnixNano())
	if a.opts.OnState != nil {
		a.opts.OnState(s)
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
	var bound time.Duration
	switch st {
	case Idle, Stopped:
		return nil
	case Connecting:
		bound = a.opts.Dial.HandshakeTimeout
		if bound <= 0 {
			bound = transport.DefaultHandshakeTimeout
		}
	case Registering:
		bound = a.opts.RegisterTimeout
	case BackingOff:
		bound = time.Duration(a.wait.Load())
	case Stopping:
		// The drain, stop's grace for cancelled calls, and a close handshake with a peer that may
		// not answer (coder/websocket waits up to 5s to write and 5s to read it).
		bound = a.opts.DrainTimeout + 11*time.Second
	case Registered:
		s := a.stream.Load()
		ping, timeout := a.opts.Dial.PingInterval, a.opts.Dial.PingTimeout
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
	defer a.setState(Stopped)
	attempt := 0
	for {
		registeredFor, err := a.session(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if registeredFor >= a.opts.Backoff.ResetAfter {
			attempt = 0
		}
		wait := a.opts.Backoff.delay(attempt, a.rand)
		attempt++
		a.wait.Store(int64(wait))
		a.setState(BackingOff)
		a.log.Warn("not connected; retrying", "err", err, "retry_in", wait.Round(time.Millisecond), "attempt", attempt)
		if err := a.opts.Sleep(ctx, wait); err != nil || ctx.Err() != nil {
			return nil
		}
	}
}

// session runs one connection from dial to loss. It reports how long the session was registered
// (zero if it never was) and why it ended.
func (a *Agent) session(ctx context.Context) (time.Duration, error) {
	a.setState(Connecting)
	stream, err := transport.Dial(ctx, a.opts.URL, a.opts.Dial)
	if err != nil {
		return 0, fmt.Errorf("connecting to %s: %w", a.opts.URL, err)
	}
	a.stream.Store(stream)
	defer a.stream.Store(nil)
	// The jsonrpc2 connection's context is not ctx: a stop must let running calls finish and
	// answer before the line is closed, so the line outlives ctx by the drain.
	conn := transport.NewConn(context.Background(), stream, a.disp, a.opts.Logger,
		jsonrpc2.OnRecv(a.noteRegistered))
	defer conn.Close()

	a.setState(Registering)
	if err := a.register(ctx, conn); err != nil {
		if ctx.Err() != nil {
			a.stop(conn)
		}
		return 0, err
	}
	registeredAt := time.Now()
	a.setState(Registered)
	a.log.Info("registered", "server", a.opts.URL, "mac", a.opts.MAC, "tools", len(a.opts.Registry.Tools()))

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
	}
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

func (a *Agent) register(ctx context.Context, conn *jsonrpc2.Conn) error {
	ctx, cancel := context.WithTimeout(ctx, a.opts.RegisterTimeout)
	defer cancel()
	params := RegisterParams{MAC: a.opts.MAC, Tools: a.opts.Registry.Declarations()}
	id := jsonrpc2.ID{Str: "reg-" + strconv.FormatUint(a.regID.Add(1), 10), IsString: true}
	var res RegisterResult
	err := conn.Call(ctx, MethodRegisterTools, params, &res, jsonrpc2.PickID(id))
	var rpcErr *jsonrpc2.Error
	switch {
	case err == nil:
		a.log.Debug("registration accepted", "status", res.Status, "message", res.Message)
		return nil
	case errors.As(err, &rpcErr):
		return fmt.Errorf("registration refused: %d %s", rpcErr.Code, rpcErr.Message)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("no answer to registration within %s", a.opts.RegisterTimeout)
	default:
		return fmt.Errorf("registering: %w", err)
	}
}

// stop drains running calls, then closes the line with status 1000.
func (a *Agent) stop(conn *jsonrpc2.Conn) {
	a.setState(Stopping)
	a.disp.stop()
	drain, cancel := context.WithTimeout(context.Background(), a.opts.DrainTimeout)
	defer cancel()
	if !a.disp.wait(drain) {
		a.log.Warn("calls still running at stop; closing anyway", "drain_timeout", a.opts.DrainTimeout)
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
