// Package agenttest is a stand-in for the AI agent server, in the spirit of net/http/httptest: it
// accepts devices over WebSocket, acknowledges their mcp/registerTools, and lets a test, a console
// or a person call their tools and stream AI messages to them. It speaks the same wire protocol as
// a real agent server and reuses the device's own transport, so a device tested against it is
// tested for real.
package agenttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
	"github.com/devicectl/devicectl/transport"
)

// Options configure a Server. Nil options, and zero fields, take defaults.
type Options struct {
	// Register decides each registration: nil accepts every one; a non-nil error is sent back as
	// the JSON-RPC error of the answer. It may block (to simulate a slow server) until ctx is done.
	Register func(ctx context.Context, d *Device) *jsonrpc2.Error
	// Voice, when set, makes the server take voice (VOICE.md): its registration answers list the
	// features whose handlers are set, and mcp/user/* go to them. Nil: a seed-002 server, which
	// lists no features and answers mcp/user/* with -32601.
	Voice *Voice
	// Logger receives connection events; nil discards.
	Logger *slog.Logger
	// ReadLimit, PingInterval and PingTimeout are passed to transport.Accept.
	ReadLimit    int64
	PingInterval time.Duration
	PingTimeout  time.Duration
}

// EventKind says what happened to a device.
type EventKind int

const (
	Registered   EventKind = iota + 1 // a device registered its tools
	Disconnected                      // a registered device's line closed
)

func (k EventKind) String() string {
	switch k {
	case Registered:
		return "registered"
	case Disconnected:
		return "disconnected"
	}
	return "unknown"
}

// Event is one change in the set of registered devices.
type Event struct {
	Kind   EventKind
	Device *Device
}

// eventBuffer is how many events wait for a slow reader before new ones are dropped: a console
// that stops reading must never stall the server.
const eventBuffer = 256

// Server is a stand-in agent server. The zero value is not usable; use NewServer, Start or Listen.
type Server struct {
	opts   Options
	log    *slog.Logger
	events chan Event
	callID atomic.Uint64

	mu      sync.Mutex
	devices map[string]*Device      // registered, by MAC
	conns   map[*jsonrpc2.Conn]bool // every open line, registered or not
	waiters []chan struct{}         // woken on every registration
	closed  bool

	wg   sync.WaitGroup // per-connection goroutines
	http *http.Server
	url  string
	done chan struct{} // closed when Serve returns
}

// NewServer returns a Server to be mounted as an http.Handler; it does not listen.
func NewServer(opts *Options) *Server {
	s := &Server{
		events:  make(chan Event, eventBuffer),
		devices: make(map[string]*Device),
		conns:   make(map[*jsonrpc2.Conn]bool),
	}
	if opts != nil {
		s.opts = *opts
	}
	s.log = s.opts.Logger
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.log = s.log.With("component", "agentserver")
	return s
}

// Start returns a Server listening on a free loopback port.
func Start(opts *Options) (*Server, error) { return Listen("127.0.0.1:0", opts) }

// Listen returns a Server listening on addr (host:port).
func Listen(addr string, opts *Options) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("agent server: %w", err)
	}
	s := NewServer(opts)
	s.url = "ws://" + ln.Addr().String() + "/"
	s.http = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("serve", "err", err)
		}
	}()
	return s, nil
}

// URL is the ws:// address devices dial; empty for a Server made by NewServer.
func (s *Server) URL() string { return s.url }

// Events delivers registrations and disconnections, in order. Events are dropped, never waited
// for, when nobody reads them.
func (s *Server) Events() <-chan Event { return s.events }

// ServeHTTP accepts one device connection and serves it until it closes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	stream, err := transport.Accept(w, r, &transport.AcceptOptions{
		ReadLimit:    s.opts.ReadLimit,
		PingInterval: s.opts.PingInterval,
		PingTimeout:  s.opts.PingTimeout,
		Logger:       s.log,
	})
	if err != nil {
		s.log.Debug("accept", "remote", r.RemoteAddr, "err", err)
		return
	}
	h := &handler{srv: s, header: r.Header.Clone(), remote: r.RemoteAddr}
	conn := transport.NewConn(context.Background(), stream, h, s.log)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		conn.Close()
		return
	}
	s.conns[conn] = true
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()

	s.log.Debug("device connected", "remote", r.RemoteAddr)
	<-conn.DisconnectNotify()
	h.wg.Wait()
	s.mu.Lock()
	delete(s.conns, conn)
	d := h.device.Load()
	if d != nil && s.devices[d.MAC] == d {
		delete(s.devices, d.MAC)
	} else {
		d = nil // replaced by a newer registration, or never registered
	}
	s.mu.Unlock()
	if d != nil {
		close(d.done)
		s.emit(Event{Kind: Disconnected, Device: d})
	}
}

func (s *Server) emit(e Event) {
	select {
	case s.events <- e:
	default:
		s.log.Warn("event dropped: nobody is reading events", "event", e.Kind, "mac", e.Device.MAC)
	}
}

// Devices returns the registered devices, ordered by MAC.
func (s *Server) Devices() []*Device {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Device, 0, len(s.devices))
	for _, d := range s.devices {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b *Device) int {
		switch {
		case a.MAC < b.MAC:
			return -1
		case a.MAC > b.MAC:
			return 1
		}
		return 0
	})
	return out
}

// Device returns the registered device with the given MAC.
func (s *Server) Device(mac string) (*Device, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.devices[mac]
	return d, ok
}

// WaitDevice waits until a device with the given MAC (any device when mac is "") is registered.
func (s *Server) WaitDevice(ctx context.Context, mac string) (*Device, error) {
	for {
		s.mu.Lock()
		for m, d := range s.devices {
			if mac == "" || m == mac {
				s.mu.Unlock()
				return d, nil
			}
		}
		wake := make(chan struct{})
		s.waiters = append(s.waiters, wake)
		s.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for device %q: %w", mac, ctx.Err())
		}
	}
}

// Close stops listening, closes every device's line and waits for the server's goroutines.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	conns := make([]*jsonrpc2.Conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	var err error
	if s.http != nil {
		err = s.http.Close()
		<-s.done
	}
	for _, c := range conns {
		c.Close()
	}
	s.wg.Wait()
	return err
}

func (s *Server) register(d *Device) {
	s.mu.Lock()
	old := s.devices[d.MAC]
	if old != nil && old.conn == d.conn {
		// The device registered again on the same line (its tools changed): the line, and with
		// it the device's lifetime, goes on.
		d.done = old.done
		old = nil
	}
	s.devices[d.MAC] = d
	waiters := s.waiters
	s.waiters = nil
	s.mu.Unlock()
	for _, w := range waiters {
		close(w)
	}
	if old != nil && old != d {
		// The same device came back on a new line before the old one was noticed dead.
		close(old.done)
		s.emit(Event{Kind: Disconnected, Device: old})
	}
	s.emit(Event{Kind: Registered, Device: d})
}

func (s *Server) nextCallID() jsonrpc2.ID {
	return jsonrpc2.ID{Str: "tool-call-" + strconv.FormatUint(s.callID.Add(1), 10), IsString: true}
}

// handler serves one line. Registrations run on their own goroutine so a slow Register hook
// never stalls the line's read loop (and with it pongs and responses).
type handler struct {
	srv    *Server
	header http.Header
	remote string
	device atomic.Pointer[Device]
	wg     sync.WaitGroup
}

func (h *handler) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	if req.Notif {
		if v := h.srv.opts.Voice; v != nil && v.Interrupt != nil && req.Method == protocol.MethodUserInterrupt {
			if d := h.device.Load(); d != nil {
				v.Interrupt(d)
			}
		}
		return
	}
	if h.srv.opts.Voice != nil && (req.Method == protocol.MethodUserText || req.Method == protocol.MethodUserAudio) {
		h.user(ctx, conn, req)
		return
	}
	if req.Method != protocol.MethodRegisterTools {
		conn.ReplyWithError(ctx, req.ID, &jsonrpc2.Error{Code: protocol.CodeMethodNotFound, Message: "Method not found"})
		return
	}
	var p protocol.RegisterParams[[]tools.Declaration]
	if req.Params == nil || json.Unmarshal(*req.Params, &p) != nil || p.MAC == "" {
		conn.ReplyWithError(ctx, req.ID, &jsonrpc2.Error{Code: protocol.CodeInvalidParams, Message: "Invalid params"})
		return
	}
	d := &Device{MAC: p.MAC, Tools: p.Tools, Header: h.header, RemoteAddr: h.remote, srv: h.srv, conn: conn, done: make(chan struct{})}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		if hook := h.srv.opts.Register; hook != nil {
			if rpcErr := hook(ctx, d); rpcErr != nil {
				conn.ReplyWithError(ctx, req.ID, rpcErr)
				return
			}
		}
		if ctx.Err() != nil {
			return // the line died while the hook made up its mind
		}
		// The line knows its device before the acceptance goes out: the device may send
		// mcp/user/* the moment it reads it, and this handler must find it registered.
		h.device.Store(d)
		// Answer before publishing, as a real server does: whoever waits for the device and then
		// calls it sends that call after the acceptance, on the same ordered line.
		err := conn.Reply(ctx, req.ID, protocol.RegisterResult{Status: protocol.StatusRegistered, Message: "Tools were successfully registered.", Features: h.srv.opts.Voice.features()})
		if err != nil {
			h.srv.log.Debug("answering registration", "mac", d.MAC, "err", err)
			return
		}
		h.srv.register(d)
	}()
}
