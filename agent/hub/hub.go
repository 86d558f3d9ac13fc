package hub

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
	"github.com/devicectl/devicectl/transport"
)

// Errors of the hub; check them with errors.Is.
var (
	// ErrGone is a call whose device's line dropped, or was replaced, before it answered.
	ErrGone = errors.New("hub: the device's line is gone")
	// ErrNotRegistered is a call or message for a MAC no device is registered as.
	ErrNotRegistered = errors.New("hub: no device is registered with that MAC")
	// ErrReplaced is why a line was closed: the same device (same Client-Id) registered on a new
	// line. It is wrapped in the Disconnected event's Reason and in ErrGone errors.
	ErrReplaced = errors.New("hub: the device registered again on a new line")
	// ErrClosed is the hub being closed.
	ErrClosed = errors.New("hub: closed")
)

// Options configure a Hub. A nil *Options means all defaults; New copies the struct.
type Options struct {
	// Tokens are the bearer tokens a device may present in its handshake. When any is set, a
	// handshake without one of them is refused with 401. Empty: no token is asked for (the
	// development default, for a server on loopback).
	Tokens []string
	// RegisterTimeout is how long a line may stay open without registering before it is closed,
	// so that idle sockets cannot pile up; 0 means DefaultRegisterTimeout, negative never.
	RegisterTimeout time.Duration
	// Logger receives registrations, refusals and disconnections; nil discards.
	Logger *slog.Logger
	// ReadLimit, PingInterval, PingTimeout and WriteTimeout are passed to transport.Accept; zero
	// means the transport's defaults.
	ReadLimit    int64
	PingInterval time.Duration
	PingTimeout  time.Duration
	WriteTimeout time.Duration
	// MaxTools is how many tools one registration may declare (agent.limits.tools_per_device);
	// 0 means DefaultMaxTools, negative no limit.
	MaxTools int
	// MaxSchemaBytes bounds one registration's params.tools as sent, in bytes
	// (agent.limits.schema_bytes), checked before anything is decoded; 0 means
	// DefaultMaxSchemaBytes, negative no limit.
	MaxSchemaBytes int64
	// Bindings remember which Client-Id each MAC registered with first; nil keeps them in
	// memory, for the life of the hub. The hub does not close it.
	Bindings Bindings

	// Listener takes what people say to devices (mcp/user/text, mcp/user/audio); the
	// registration answer then lists the features. nil: the hub is a seed-002 server, and
	// answers those methods -32601. With one, a line reads frames up to what MaxUtterance of
	// audio takes in base64 even when ReadLimit is smaller.
	Listener Listener
	// MaxUtterance is the longest mcp/user/audio taken; 0 means DefaultMaxUtterance.
	MaxUtterance time.Duration
	// MaxText is the longest mcp/user/text taken, in bytes (agent.limits.message_bytes); 0
	// means DefaultMaxText.
	MaxText int
	// UserQueue is how many requests of one device may wait for its worker (transcription
	// and turn) before more are answered -32002; 0 means DefaultUserQueue.
	UserQueue int
	// TranscribeTimeout bounds one transcription; 0 means DefaultTranscribeTimeout.
	TranscribeTimeout time.Duration

	// Cluster shares the devices with the other serve nodes of a cluster (agent/cluster); nil:
	// this hub is the only node. New attaches it; the hub does not close it, and it must
	// outlive the hub's Close, which releases the devices' holds through it.
	Cluster Cluster
}

// DefaultRegisterTimeout is Options.RegisterTimeout's default. A device registers as soon as it
// is connected (docs/protocol.md); 30 s leaves room for a slow link.
const DefaultRegisterTimeout = 30 * time.Second

// Device is a registered device, as Devices and events show it.
type Device struct {
	MAC        string
	Tools      []tools.Declaration // as declared; the schemas are shared, do not modify them
	Since      time.Time           // when this line registered the MAC
	RemoteAddr string
	ClientID   string // the Client-Id header of its line; "" when it sent none, or on another node
	Node       string // the cluster node whose line serves it; "" without a cluster
}

// Hub serves device lines. Make one with New; mount it as an http.Handler.
type Hub struct {
	opts   Options
	log    *slog.Logger
	tokens [][sha256.Size]byte
	nextID atomic.Uint64

	// bmu orders the registrations' binding decisions: from reading a MAC's binding to writing
	// it, no other registration decides, so two clients cannot both find a MAC free.
	bmu sync.Mutex

	mu       sync.Mutex
	closed   bool
	lines    map[*line]struct{}
	devices  map[string]*registration // by MAC: this node's lines' and, in a cluster, the others'
	toolsets map[string]*toolset      // by raw params.tools, shared between registrations
	claiming map[string]*line         // MACs a line of this node is claiming across the cluster
	node     string                   // Options.Cluster's Node

	subMu sync.Mutex
	subs  map[*subscription]struct{}

	wg sync.WaitGroup // read loops and closings of replaced lines
}

// registration is one MAC served by one line, from its registration to its end.
type registration struct {
	mac      string
	line     *line  // nil for a device another node of the cluster holds
	node     string // the node whose line serves it; "" without a cluster
	remote   string
	clientID string // "" for none, and on another node
	since    time.Time
	tools    *toolset      // guarded by Hub.mu: a re-registration swaps it
	done     chan struct{} // closed when the registration ends
}

// New returns a Hub. It listens on nothing: mount it (it is an http.Handler).
func New(o *Options) *Hub {
	h := &Hub{
		lines:    make(map[*line]struct{}),
		devices:  make(map[string]*registration),
		toolsets: make(map[string]*toolset),
		claiming: make(map[string]*line),
		subs:     make(map[*subscription]struct{}),
	}
	if o != nil {
		h.opts = *o
		h.opts.Tokens = slices.Clone(o.Tokens)
	}
	for _, t := range h.opts.Tokens {
		if t != "" {
			h.tokens = append(h.tokens, sha256.Sum256([]byte(t)))
		}
	}
	if h.opts.RegisterTimeout == 0 {
		h.opts.RegisterTimeout = DefaultRegisterTimeout
	}
	if h.opts.MaxTools == 0 {
		h.opts.MaxTools = DefaultMaxTools
	}
	if h.opts.MaxSchemaBytes == 0 {
		h.opts.MaxSchemaBytes = DefaultMaxSchemaBytes
	}
	if h.opts.Bindings == nil {
		h.opts.Bindings = newMemBindings()
	}
	if h.opts.MaxUtterance <= 0 {
		h.opts.MaxUtterance = DefaultMaxUtterance
	}
	if h.opts.MaxText <= 0 {
		h.opts.MaxText = DefaultMaxText
	}
	if h.opts.UserQueue <= 0 {
		h.opts.UserQueue = DefaultUserQueue
	}
	if h.opts.TranscribeTimeout <= 0 {
		h.opts.TranscribeTimeout = DefaultTranscribeTimeout
	}
	if h.opts.Listener != nil {
		// An utterance of MaxUtterance, in base64, with the frame around it.
		need := int64(h.maxAudioBase64()) + 4<<10
		if limit := cmp.Or(h.opts.ReadLimit, transport.DefaultReadLimit); limit > 0 && limit < need {
			h.opts.ReadLimit = need
		}
	}
	h.log = h.opts.Logger
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	h.log = h.log.With("component", "hub")
	if c := h.opts.Cluster; c != nil {
		h.node = c.Node()
		c.Attach(node{h})
	}
	return h
}

// ServeHTTP accepts a device's WebSocket on any path; the line is served until it closes, on a
// goroutine of the hub's (Close waits for it), after ServeHTTP has returned.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.authorized(r) {
		h.log.Warn("device refused: no valid bearer token", "remote", r.RemoteAddr)
		w.Header().Set("WWW-Authenticate", `Bearer realm="devicectl"`)
		http.Error(w, "a valid device token is required", http.StatusUnauthorized)
		return
	}
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if closed {
		http.Error(w, "the server is shutting down", http.StatusServiceUnavailable)
		return
	}
	s, err := transport.Accept(w, r, &transport.AcceptOptions{
		ReadLimit:    h.opts.ReadLimit,
		PingInterval: h.opts.PingInterval,
		PingTimeout:  h.opts.PingTimeout,
		WriteTimeout: h.opts.WriteTimeout,
		Logger:       h.opts.Logger,
	})
	if err != nil {
		h.log.Debug("accept", "remote", r.RemoteAddr, "err", err)
		return
	}
	l := &line{h: h, s: s, remote: r.RemoteAddr, clientID: r.Header.Get("Client-Id"), tokenOK: len(h.tokens) > 0,
		pending: make(map[uint64]chan reply), registered: make(chan struct{})}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		s.Close()
		return
	}
	h.lines[l] = struct{}{}
	h.wg.Add(1)
	if d := h.opts.RegisterTimeout; d > 0 {
		h.wg.Go(func() { l.awaitRegistration(d) })
	}
	h.mu.Unlock()
	h.log.Debug("line open", "remote", l.remote)
	// The read loop runs on a goroutine of its own and the handler returns: net/http has nothing
	// left to do for a hijacked connection, and its goroutine, with the request and its headers,
	// would otherwise be held for the line's life.
	go func() {
		defer h.wg.Done()
		l.serve()
	}()
}

// authorized reports whether r carries one of the accepted tokens, or none is asked for. Tokens
// are compared as SHA-256 sums in constant time, so neither their contents nor their lengths
// show in the timing.
func (h *Hub) authorized(r *http.Request) bool {
	if len(h.tokens) == 0 {
		return true
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || got == "" {
		return false
	}
	sum := sha256.Sum256([]byte(got))
	match := 0
	for i := range h.tokens {
		match |= subtle.ConstantTimeCompare(sum[:], h.tokens[i][:])
	}
	return match == 1
}

// Devices returns the registered devices, ordered by MAC.
func (h *Hub) Devices() []Device {
	h.mu.Lock()
	out := make([]Device, 0, len(h.devices))
	for _, r := range h.devices {
		out = append(out, r.snapshot())
	}
	h.mu.Unlock()
	slices.SortFunc(out, func(a, b Device) int { return cmp.Compare(a.MAC, b.MAC) })
	return out
}

// Device returns the registered device with that MAC.
func (h *Hub) Device(mac string) (Device, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.devices[normalMAC(mac)]
	if r == nil {
		return Device{}, false
	}
	return r.snapshot(), true
}

// Done returns a channel closed when the current registration of mac ends: its line dropped, was
// replaced, or the hub closed. ok is false when no device is registered with that MAC.
func (h *Hub) Done(mac string) (done <-chan struct{}, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.devices[normalMAC(mac)]
	if r == nil {
		return nil, false
	}
	return r.done, true
}

// snapshot must be called with Hub.mu held.
func (r *registration) snapshot() Device {
	return Device{
		MAC:        r.mac,
		Tools:      r.tools.declarations(),
		Since:      r.since,
		RemoteAddr: r.remote,
		ClientID:   r.clientID,
		Node:       r.node,
	}
}

// Close closes every line, waits for every goroutine the hub started and closes the
// subscriptions. Calls in flight fail with ErrGone; new lines are refused with 503.
func (h *Hub) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	lines := make([]*line, 0, len(h.lines))
	for l := range h.lines {
		lines = append(lines, l)
	}
	for _, r := range h.devices {
		if r.line == nil { // another node's: calls to it end, as those to a line do
			h.drop(r)
		}
	}
	h.mu.Unlock()
	// In parallel: each close waits a bounded time for its peer's close frame, and a thousand
	// dead peers must not add up.
	var closing sync.WaitGroup
	for _, l := range lines {
		closing.Go(func() { l.s.Shutdown() }) // 1001: the device reconnects without a warning
	}
	closing.Wait()
	h.wg.Wait()
	h.subMu.Lock()
	for s := range h.subs {
		delete(h.subs, s)
		close(s.ch)
	}
	h.subMu.Unlock()
	return nil
}

// acquireToolset returns the shared toolset for raw, building it on first use. Called with
// Hub.mu not held: checking schemas takes a while and must not stall other lines.
func (h *Hub) acquireToolset(raw []byte) (*toolset, error) {
	h.mu.Lock()
	ts := h.toolsets[string(raw)]
	if ts != nil {
		ts.refs++
		h.mu.Unlock()
		return ts, nil
	}
	h.mu.Unlock()
	built, err := newToolset(raw)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if ts := h.toolsets[built.key]; ts != nil { // built meanwhile by another line
		ts.refs++
		return ts, nil
	}
	built.refs = 1
	h.toolsets[built.key] = built
	return built, nil
}

// releaseToolset drops one reference; called with Hub.mu held.
func (h *Hub) releaseToolset(ts *toolset) {
	if ts == nil {
		return
	}
	ts.refs--
	if ts.refs == 0 {
		delete(h.toolsets, ts.key)
	}
}

// Forget frees mac from the Client-Id it is bound to, so that the next device to register it,
// whatever its Client-Id, binds it. It reports whether mac was bound. A device registered as mac
// now keeps its line, and is bound again when it registers again, unless another was first.
func (h *Hub) Forget(ctx context.Context, mac string) (bool, error) {
	m, err := protocol.ParseMAC(mac)
	if err != nil {
		return false, err
	}
	h.bmu.Lock()
	defer h.bmu.Unlock()
	was, err := h.opts.Bindings.Forget(ctx, m)
	if err != nil {
		return false, err
	}
	if was {
		h.log.Info("device binding forgotten: the next device to register this MAC binds it", "mac", m)
	}
	return was, nil
}

// MACs returns the registered devices' MACs, sorted: Devices without the tools.
func (h *Hub) MACs() []string {
	h.mu.Lock()
	out := make([]string, 0, len(h.devices))
	for m := range h.devices {
		out = append(out, m)
	}
	h.mu.Unlock()
	slices.Sort(out)
	return out
}
