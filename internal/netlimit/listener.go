package netlimit

import (
	"container/list"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// FileReserve is how many open files the process keeps for itself (the database, logs, outgoing
// connections) when Options.Connections is lowered to the open-file limit.
const FileReserve = 256

// DefaultLogEvery is how often, at most, a cap reached is logged again.
const DefaultLogEvery = 10 * time.Second

// ListenerOptions configure NewListener. Nil means no caps.
type ListenerOptions struct {
	// Connections caps the open connections in all (agent.limits.connections); 0: no cap but
	// the open-file limit's.
	Connections int
	// PerAddress caps the open connections from one IP address
	// (agent.limits.connections_per_address); 0: no cap.
	PerAddress int
	// FileLimit returns the process's open-file limit; nil is the operating system's
	// (RLIMIT_NOFILE where there is one). ok false: no limit known, Connections is kept.
	FileLimit func() (limit uint64, ok bool)
	// LogEvery is how often at most a cap reached is logged again; 0 is DefaultLogEvery.
	LogEvery time.Duration
	Logger   *slog.Logger // nil: nothing is logged

	onRelease    func() // tests: called after a connection's counts are released
	onIdleChange func() // tests: called after ConnState changed which connections are idle
}

// Listener is a net.Listener that caps its open connections. See the package doc.
type Listener struct {
	net.Listener
	o     ListenerOptions
	slots chan struct{} // one token per open connection; nil: no total cap
	done  chan struct{} // closed by Close: a blocked Accept returns
	close sync.Once

	open atomic.Int64

	mu       sync.Mutex
	byAddr   map[netip.Addr]int
	idle     *list.List // of *conn holding no request, the longest idle first (see ConnState)
	draining bool       // Drain was called: a connection yet to send a request is closed

	fullLog, addrLog rateLog
}

// NewListener wraps ln. The options are copied.
func NewListener(ln net.Listener, opts *ListenerOptions) *Listener {
	var o ListenerOptions
	if opts != nil {
		o = *opts
	}
	if o.LogEvery <= 0 {
		o.LogEvery = DefaultLogEvery
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.FileLimit == nil {
		o.FileLimit = fileLimit
	}
	if limit, ok := o.FileLimit(); ok {
		if most := maxConnections(limit); o.Connections == 0 || o.Connections > most {
			// Debug: with the defaults this is every start on a machine whose limit is 20000.
			o.Logger.Debug("agent.limits.connections lowered to what the open-file limit leaves: more connections would take every descriptor",
				"connections", o.Connections, "open_file_limit", limit, "reserve", FileReserve, "now", most)
			o.Connections = most
		}
	}
	l := &Listener{Listener: ln, o: o, done: make(chan struct{}), byAddr: map[netip.Addr]int{}, idle: list.New()}
	if o.Connections > 0 {
		l.slots = make(chan struct{}, o.Connections)
	}
	l.fullLog.every, l.addrLog.every = o.LogEvery, o.LogEvery
	return l
}

// maxConnections is the connections an open-file limit allows: the limit less FileReserve, or
// half of a limit too small to keep that much.
func maxConnections(limit uint64) int {
	n := limit / 2
	if limit > 2*FileReserve {
		n = limit - FileReserve
	}
	if n > 1<<30 {
		n = 1 << 30 // unlimited
	}
	return max(int(n), 1)
}

// Connections is the cap on open connections in all, after the open-file limit lowered it; 0:
// none.
func (l *Listener) Connections() int { return l.o.Connections }

// Open is the number of connections accepted and not yet closed.
func (l *Listener) Open() int { return int(l.open.Load()) }

// Accept waits for a connection. One from an address at its cap is closed at once and the next
// waited for. At the total cap, the connection that has held no request the longest is closed
// to make room (see ConnState); when every connection holds one, Accept waits for one to close.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr, ok := remoteIP(c)
		if ok && !l.addAddr(addr) {
			if n, log := l.addrLog.due(); log {
				l.o.Logger.Warn("agent.limits.connections_per_address reached: a new connection from the address is closed",
					"address", addr.String(), "limit", l.o.PerAddress, "closed", n)
			}
			c.Close()
			if l.o.onRelease != nil {
				l.o.onRelease()
			}
			continue
		}
		nc := &conn{Conn: c, l: l, addr: addr, counted: ok}
		if err := l.acquire(); err != nil {
			nc.Close()
			return nil, err
		}
		nc.slotted = true
		l.open.Add(1)
		return nc, nil
	}
}

// acquire takes a slot: a free one, else an idle connection's, else it waits for one, or fails
// once the listener is closed.
func (l *Listener) acquire() error {
	if l.slots == nil {
		return nil
	}
	select {
	case l.slots <- struct{}{}:
		return nil
	default:
	}
	if victim := l.idlest(); victim != nil {
		if n, log := l.fullLog.due(); log {
			l.o.Logger.Warn("agent.limits.connections reached: the connection idle the longest is closed for a new one",
				"limit", l.o.Connections, "times", n)
		}
		victim.Close() // releases its slot
	} else if n, log := l.fullLog.due(); log {
		l.o.Logger.Warn("agent.limits.connections reached, every connection busy: new connections wait in the listen queue until one closes",
			"limit", l.o.Connections, "times", n)
	}
	select {
	case l.slots <- struct{}{}:
		return nil
	case <-l.done:
		return net.ErrClosed
	}
}

// idlest takes the connection that has held no request the longest off the idle list; nil when
// there is none.
func (l *Listener) idlest() *conn {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.idle.Front()
	if e == nil {
		return nil
	}
	l.idle.Remove(e)
	c := e.Value.(*conn)
	c.elem = nil
	return c
}

// ConnState is for http.Server.ConnState, on a server serving a Listener: it tells the listener
// which connections hold no request (new, or idle between two), the ones it may close at its
// cap. Without it, the listener closes none and waits at its cap.
func ConnState(nc net.Conn, state http.ConnState) {
	c, ok := nc.(*conn)
	if !ok {
		return
	}
	l := c.l
	l.mu.Lock()
	if c.elem != nil {
		l.idle.Remove(c.elem)
		c.elem = nil
	}
	c.fresh = state == http.StateNew
	if (state == http.StateNew || state == http.StateIdle) && !c.released {
		c.elem = l.idle.PushBack(c)
	}
	drop := c.fresh && l.draining
	l.mu.Unlock()
	if drop {
		c.Close()
	}
	if l.o.onIdleChange != nil {
		l.o.onIdleChange()
	}
}

// Drain closes the connections that have sent nothing yet, and each one accepted from now on: for
// http.Server.RegisterOnShutdown. Shutdown closes connections idle between requests itself, but
// waits up to 5 s for a new one's first request, which a client that opened a connection ahead of
// need (a browser's preconnect, a pool's dial that lost its request) may never send. A first
// request under way is left to finish.
func (l *Listener) Drain() {
	l.mu.Lock()
	l.draining = true
	var fresh []*conn
	for e := l.idle.Front(); e != nil; e = e.Next() {
		if c := e.Value.(*conn); c.fresh && !c.spoke.Load() {
			fresh = append(fresh, c)
		}
	}
	l.mu.Unlock()
	for _, c := range fresh {
		c.Close()
	}
}

// addAddr counts a connection from addr, unless addr is at its cap.
func (l *Listener) addAddr(addr netip.Addr) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.o.PerAddress > 0 && l.byAddr[addr] >= l.o.PerAddress {
		return false
	}
	l.byAddr[addr]++
	return true
}

// release gives back what c holds: its address's count, its place on the idle list and, once it
// had one, its slot.
func (l *Listener) release(c *conn) {
	l.mu.Lock()
	if c.counted {
		if l.byAddr[c.addr]--; l.byAddr[c.addr] <= 0 {
			delete(l.byAddr, c.addr)
		}
	}
	if c.elem != nil {
		l.idle.Remove(c.elem)
		c.elem = nil
	}
	c.released = true
	l.mu.Unlock()
	if c.slotted {
		l.open.Add(-1)
		if l.slots != nil {
			<-l.slots
		}
	}
	if l.o.onRelease != nil {
		l.o.onRelease()
	}
}

// Close closes the listener; an Accept waiting for a slot returns net.ErrClosed. Connections
// already accepted stay open.
func (l *Listener) Close() error {
	l.close.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// remoteIP is c's peer's IP address, IPv4 in IPv6 unmapped; ok is false for a peer without one
// (a Unix socket), which only the total cap counts.
func remoteIP(c net.Conn) (netip.Addr, bool) {
	ap, err := netip.ParseAddrPort(c.RemoteAddr().String())
	if err != nil {
		return netip.Addr{}, false
	}
	return ap.Addr().Unmap(), true
}

// conn releases its counts on its first Close.
type conn struct {
	net.Conn
	l       *Listener
	addr    netip.Addr
	counted bool // addr is counted in l.byAddr
	slotted bool // it holds a slot: set before Accept returns it
	once    sync.Once

	// Guarded by l.mu.
	elem     *list.Element // on l.idle while it holds no request
	fresh    bool          // it has not sent a request yet (http.StateNew)
	spoke    atomic.Bool   // a read has returned bytes: a request may be under way
	released bool
}

func (c *conn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 && !c.spoke.Load() {
		c.spoke.Store(true)
	}
	return n, err
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c) })
	return err
}

// CloseWrite half-closes a TCP connection, which net/http does before closing one it answered
// with an error, so the client reads the answer rather than a reset.
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// Unwrap returns the accepted connection.
func (c *conn) Unwrap() net.Conn { return c.Conn }

// rateLog says when a repeated event is logged: the first time, then at most once every every.
type rateLog struct {
	every time.Duration
	mu    sync.Mutex
	last  time.Time
	n     int // events since the last line
}

// due counts one event and reports whether to log it, with the events the line stands for.
func (r *rateLog) due() (int, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	now := time.Now()
	if !r.last.IsZero() && now.Sub(r.last) < r.every {
		return 0, false
	}
	n := r.n
	r.last, r.n = now, 0
	return n, true
}
