package netlimit

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/devicectl/devicectl/internal/testing/poll"
	"github.com/devicectl/devicectl/internal/testing/rawconn"
)

// waitFor bounds waits for what takes milliseconds when it works.
const waitFor = rawconn.Wait

func noFileLimit() (uint64, bool) { return 0, false }

// serve serves h through Handler(hopts) on a loopback port through NewListener(lopts) until the
// test ends. It returns the address and the listener.
func serve(t *testing.T, h http.Handler, srv *http.Server, lopts *ListenerOptions, hopts *HandlerOptions) (string, *Listener) {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o := ListenerOptions{FileLimit: noFileLimit}
	if lopts != nil {
		o = *lopts
		if o.FileLimit == nil {
			o.FileLimit = noFileLimit
		}
	}
	ln := NewListener(smallSendBuffers{inner}, &o)
	if srv == nil {
		srv = &http.Server{ConnState: ConnState}
	}
	srv.Handler = Handler(h, hopts)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return inner.Addr().String(), ln
}

// smallSendBuffers gives each connection a small send buffer, so that a stalled reader blocks
// the server's writes after kilobytes rather than the megabytes Linux grows it to.
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(8 << 10)
	}
	return c, err
}

// idleChanges returns an onIdleChange hook and the channel it wakes: a pending wake stands for
// any number of changes, so none is lost and the hook never blocks the server.
func idleChanges() (hook func(), changed <-chan struct{}) {
	ch := make(chan struct{}, 1)
	return func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	}, ch
}

// waitIdle waits until ln, built with the hook of changed, holds n connections with no request.
func waitIdle(t *testing.T, ln *Listener, changed <-chan struct{}, n int) {
	t.Helper()
	timeout := time.After(waitFor)
	for {
		ln.mu.Lock()
		got := ln.idle.Len()
		ln.mu.Unlock()
		if got == n {
			return
		}
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("%d idle connections after %v, want %d", got, waitFor, n)
		}
	}
}

// get sends a GET on c and reads the answer.
func get(t *testing.T, c net.Conn, path string) *http.Response {
	t.Helper()
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: test\r\n\r\n", path)
	c.SetReadDeadline(time.Now().Add(waitFor))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })

// logged is a slog handler that hands each record's message to a channel.
type logged chan string

func (l logged) Enabled(context.Context, slog.Level) bool { return true }
func (l logged) Handle(_ context.Context, r slog.Record) error {
	select {
	case l <- r.Message:
	default: // more than the test reads
	}
	return nil
}
func (l logged) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l logged) WithGroup(string) slog.Handler      { return l }

// waitLogged waits for a message holding want.
func waitLogged(t *testing.T, l logged, want string) {
	t.Helper()
	timeout := time.After(waitFor)
	for {
		select {
		case m := <-l:
			if strings.Contains(m, want) {
				return
			}
		case <-timeout:
			t.Fatalf("nothing logged saying %q", want)
		}
	}
}

// At Connections, with ConnState wired, a new connection takes the place of one that holds no
// request: a normal client is answered at once behind a flood of idle ones.
func TestListenerEvictsIdle(t *testing.T) {
	log := make(logged, 16)
	idleChanged, changed := idleChanges()
	addr, ln := serve(t, ok, &http.Server{ConnState: ConnState}, &ListenerOptions{Connections: 2, Logger: slog.New(log), onIdleChange: idleChanged}, nil)
	kept := rawconn.Dial(t, addr)
	get(t, kept, "/") // idle between two requests
	// The server marks it idle a moment after the answer is read; the flood below must come after,
	// or kept would be the newest idle one, not the oldest.
	waitIdle(t, ln, changed, 1)
	partial := rawconn.Dial(t, addr)
	fmt.Fprintf(partial, "GET / HTTP/1.1\r\n") // a header begun is not a request yet
	for range 20 {
		rawconn.Dial(t, addr) // they send nothing
	}
	c := rawconn.Dial(t, addr)
	if resp := get(t, c, "/"); resp.StatusCode != http.StatusOK {
		t.Fatalf("behind 20 idle connections at the cap of 2: %s", resp.Status)
	}
	waitLogged(t, log, "the connection idle the longest is closed for a new one")
	for _, c := range []net.Conn{kept, partial} {
		if err := rawconn.Closed(c); err != nil {
			t.Errorf("%v; want it closed to make room", err)
		}
	}
	if got := ln.Open(); got > 2 {
		t.Errorf("Open() = %d, over the cap of 2", got)
	}
}

// A connection that never sends a request does not hold a server's shutdown up: Drain, run by
// Shutdown, closes it, where net/http alone would wait 5 s for its first request.
func TestDrainEndsShutdownWait(t *testing.T) {
	idleChanged, changed := idleChanges()
	srv := &http.Server{ConnState: ConnState}
	addr, ln := serve(t, ok, srv, &ListenerOptions{onIdleChange: idleChanged}, nil)
	srv.RegisterOnShutdown(ln.Drain)
	used := rawconn.Dial(t, addr)
	get(t, used, "/")
	silent := rawconn.Dial(t, addr)
	waitIdle(t, ln, changed, 2)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown with a connection that sent no request: %v", err)
	}
	for _, c := range []net.Conn{used, silent} {
		if err := rawconn.Closed(c); err != nil {
			t.Errorf("%v; want it closed by the shutdown", err)
		}
	}
}

// Drain closes a connection that sent nothing and, once draining, one accepted after as soon as
// the server sees it; a first request under way is left to finish.
func TestDrainClosesSilentConnections(t *testing.T) {
	idleChanged, changed := idleChanges()
	addr, ln := serve(t, ok, nil, &ListenerOptions{onIdleChange: idleChanged}, nil)
	busy := rawconn.Dial(t, addr)
	fmt.Fprintf(busy, "GET / HTTP/1.1\r\nHost: x\r\n") // a request begun, not yet ended
	silent := rawconn.Dial(t, addr)
	waitIdle(t, ln, changed, 2)
	// The server must have read busy's bytes, or it is as silent as silent: a read of them is
	// what tells the two apart.
	poll.Until(t, "the server reads the request begun", func() bool {
		ln.mu.Lock()
		defer ln.mu.Unlock()
		spoke := 0
		for e := ln.idle.Front(); e != nil; e = e.Next() {
			if e.Value.(*conn).spoke.Load() {
				spoke++
			}
		}
		return spoke == 1
	})
	ln.Drain()
	if err := rawconn.Closed(silent); err != nil {
		t.Errorf("a connection that sent nothing: %v; want it closed", err)
	}
	late := rawconn.Dial(t, addr)
	if err := rawconn.Closed(late); err != nil {
		t.Errorf("a connection accepted while draining: %v; want it closed", err)
	}
	fmt.Fprintf(busy, "\r\n")
	if resp, err := http.ReadResponse(bufio.NewReader(busy), nil); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("the request begun before Drain: %v, %v; want 200", resp, err)
	}
}

// Past Connections, when every connection holds a request, a normal client waits for one to
// close rather than being refused.
func TestListenerConnections(t *testing.T) {
	log := make(logged, 16)
	release := make(chan struct{})
	addr, ln := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/busy" {
			w.WriteHeader(http.StatusOK)
			http.NewResponseController(w).Flush()
			select {
			case <-release:
			case <-r.Context().Done(): // the client went
			}
		}
	}), &http.Server{ConnState: ConnState}, &ListenerOptions{Connections: 2, Logger: slog.New(log)}, nil)
	defer close(release)
	busy := []net.Conn{rawconn.Dial(t, addr), rawconn.Dial(t, addr)}
	for _, c := range busy { // answered, not finished
		fmt.Fprintf(c, "GET /busy HTTP/1.1\r\nHost: test\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(waitFor))
		if _, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil {
			t.Fatal(err)
		}
	}

	c := rawconn.Dial(t, addr) // in the kernel's queue
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: test\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, err := c.Read(make([]byte, 1)); n != 0 || !isTimeout(err) {
		t.Fatalf("a third connection was answered (%d bytes, %v) while 2 were open, the cap", n, err)
	}
	if got := ln.Open(); got != 2 {
		t.Errorf("Open() = %d, want 2", got)
	}
	waitLogged(t, log, "every connection busy")
	busy[0].Close()
	c.SetReadDeadline(time.Now().Add(waitFor))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("once one closed, the waiting request: %v", err)
	}
	resp.Body.Close()
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Past PerAddress, a new connection from the address is closed at once; one closing makes room.
func TestListenerPerAddress(t *testing.T) {
	released := make(chan struct{}, 8)
	log := make(logged, 16)
	addr, _ := serve(t, ok, nil, &ListenerOptions{PerAddress: 2, Logger: slog.New(log), onRelease: func() { released <- struct{}{} }}, nil)
	a, b := rawconn.Dial(t, addr), rawconn.Dial(t, addr)
	get(t, a, "/")
	get(t, b, "/")
	if err := rawconn.Closed(rawconn.Dial(t, addr)); err != nil {
		t.Fatalf("a third connection from 127.0.0.1 with connections_per_address 2: %v", err)
	}
	<-released // the refused one
	waitLogged(t, log, "agent.limits.connections_per_address reached")
	a.Close()
	select {
	case <-released:
	case <-time.After(waitFor):
		t.Fatal("a closed connection was not released")
	}
	if got := get(t, rawconn.Dial(t, addr), "/"); got.StatusCode != http.StatusOK {
		t.Errorf("after one closed: %s", got.Status)
	}
}

// A connection closed twice is released once; a hijacked one is released when its new owner
// closes it.
func TestListenerReleaseOnce(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := NewListener(inner, &ListenerOptions{Connections: 4, PerAddress: 4, FileLimit: noFileLimit})
	defer ln.Close()
	c1 := rawconn.Dial(t, inner.Addr().String())
	c2 := rawconn.Dial(t, inner.Addr().String())
	s1, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	s2, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	s1.Close()
	s1.Close()
	if got := ln.Open(); got != 1 {
		t.Errorf("Open() = %d after one of two closed twice, want 1", got)
	}
	s2.Close()
	if got, slots, addrs := ln.Open(), len(ln.slots), len(ln.byAddr); got != 0 || slots != 0 || addrs != 0 {
		t.Errorf("all closed: Open() %d, slots taken %d, addresses counted %d; want 0", got, slots, addrs)
	}
	c1.Close()
	c2.Close()
}

func TestListenerHijackReleased(t *testing.T) {
	released := make(chan struct{}, 1)
	addr, ln := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, rw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		rw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
		rw.Flush()
		c.Close()
	}), nil, &ListenerOptions{Connections: 1, onRelease: func() { released <- struct{}{} }}, nil)
	get(t, rawconn.Dial(t, addr), "/")
	select {
	case <-released:
	case <-time.After(waitFor):
		t.Fatal("a hijacked connection closed by its handler was not released")
	}
	if got := ln.Open(); got != 0 {
		t.Errorf("Open() = %d, want 0", got)
	}
}

// The cap is lowered to the open-file limit less the reserve.
func TestListenerFileLimit(t *testing.T) {
	for _, tc := range []struct {
		conns int
		limit uint64
		want  int
	}{
		{20000, 20000, 20000 - FileReserve},
		{100, 20000, 100},
		{0, 1024, 1024 - FileReserve},
		{1000, 300, 150},
	} {
		inner, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ln := NewListener(inner, &ListenerOptions{Connections: tc.conns, FileLimit: func() (uint64, bool) { return tc.limit, true }})
		if got := ln.Connections(); got != tc.want {
			t.Errorf("connections %d, open-file limit %d: cap %d, want %d", tc.conns, tc.limit, got, tc.want)
		}
		ln.Close()
	}
}

// A body over RequestBytes is 413, whether its Content-Length says so or it runs over, JSON-RPC
// to a JSON request; the connection closes.
func TestRequestBytes(t *testing.T) {
	var handlerAnswered bool
	addr, _ := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			// A handler's own answer to a body it could not read, as the seed routes give.
			handlerAnswered = true
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Invalid JSON payload"}}`)
			return
		}
		io.WriteString(w, "read")
	}), nil, nil, &HandlerOptions{RequestBytes: 1024})

	big := strings.Repeat("x", 4096)
	for _, tc := range []struct {
		name, ctype string
		chunked     bool
		want        string
	}{
		{"length json", "application/json", false, `agent.limits.request_bytes (1024 bytes)"}`},
		{"chunked json", "application/json; charset=utf-8", true, `"code":-32600`},
		{"length text", "text/plain", false, "Request body too large: the request body is over agent.limits.request_bytes (1024 bytes)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := rawconn.Dial(t, addr)
			head := fmt.Sprintf("POST / HTTP/1.1\r\nHost: test\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", tc.ctype, len(big))
			payload := big
			if tc.chunked {
				head = fmt.Sprintf("POST / HTTP/1.1\r\nHost: test\r\nContent-Type: %s\r\nTransfer-Encoding: chunked\r\n\r\n", tc.ctype)
				payload = fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(big), big)
			}
			go io.WriteString(c, head+payload) // the server may answer before it reads it all
			c.SetReadDeadline(time.Now().Add(waitFor))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), tc.want) || !resp.Close {
				t.Errorf("%s, close %v, %s; want 413 saying %s, closing", resp.Status, resp.Close, b, tc.want)
			}
			if err := rawconn.Closed(c); err != nil {
				t.Error(err)
			}
		})
	}
	if !handlerAnswered {
		t.Error("the chunked body never reached the handler: the 413 was not the handler's answer overruled")
	}
	if got := get(t, rawconn.Dial(t, addr), "/"); got.StatusCode != http.StatusOK {
		t.Errorf("a GET without a body: %s", got.Status)
	}
}

// A body that trickles in is answered 408 within BodyTimeout, and the connection closes.
func TestBodyTimeout(t *testing.T) {
	const timeout = 300 * time.Millisecond
	addr, _ := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
	}), nil, nil, &HandlerOptions{BodyTimeout: timeout})
	c := rawconn.Dial(t, addr)
	start := time.Now()
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
	rawconn.Trickle(t, c, 50*time.Millisecond) // each read is quick, the body is not
	c.SetReadDeadline(time.Now().Add(waitFor))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	took := time.Since(start)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), "agent.limits.body_timeout (300ms)") {
		t.Errorf("%s %s; want 408 naming agent.limits.body_timeout", resp.Status, b)
	}
	if took < timeout || took > timeout+2*time.Second {
		t.Errorf("answered after %v, want about body_timeout %v", took, timeout)
	}
}

// A refusal closes the connection; a success keeps it.
func TestRefusalCloses(t *testing.T) {
	addr, _ := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/secret" {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		io.WriteString(w, "ok")
	}), nil, nil, &HandlerOptions{})
	c := rawconn.Dial(t, addr)
	if resp := get(t, c, "/open"); resp.Close {
		t.Error("a 200 closed the connection")
	}
	if resp := get(t, c, "/secret"); resp.StatusCode != http.StatusUnauthorized || !resp.Close {
		t.Errorf("%s, Connection: close %v; want 401 closing", resp.Status, resp.Close)
	}
	if err := rawconn.Closed(c); err != nil {
		t.Errorf("after a 401: %v", err)
	}
}

// A stream whose reader stalls ends within WriteTimeout (the handler returns); one that is read
// goes on past it.
func TestWriteTimeoutStream(t *testing.T) {
	const timeout = 200 * time.Millisecond
	returned := make(chan string, 2)
	addr, _ := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { returned <- r.URL.Path }()
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := "data: " + strings.Repeat("x", 1024) + "\n\n"
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for i := 0; r.URL.Path == "/stalled" || i < 1000; i++ { // /read: about 1s, 5 timeouts
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
			if err := http.NewResponseController(w).Flush(); err != nil {
				return
			}
			<-tick.C
		}
	}), nil, nil, &HandlerOptions{WriteTimeout: timeout})

	stalled := rawconn.DialStalled(t, addr)
	fmt.Fprintf(stalled, "GET /stalled HTTP/1.1\r\nHost: test\r\n\r\n")
	select {
	case <-returned:
	case <-time.After(waitFor):
		t.Fatalf("the stream of a reader that stalled was still written after %v (write_timeout %v)", waitFor, timeout)
	}

	resp, err := http.Get("http://" + addr + "/read")
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || n != 1000*(1024+8) {
		t.Errorf("a stream that was read: %d bytes, %v; want all of it", n, err)
	}
}

// The ResponseWriter handlers get keeps Flusher, Hijacker and Unwrap: a WebSocket upgrade works
// through it, and the connection outlives every timeout.
func TestWebSocketThrough(t *testing.T) {
	const timeout = 100 * time.Millisecond
	addr, _ := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := w.(http.Flusher); !ok {
			t.Error("the ResponseWriter is not an http.Flusher")
		}
		if err := http.NewResponseController(w).SetWriteDeadline(time.Time{}); err != nil {
			t.Errorf("ResponseController through the ResponseWriter: %v", err)
		}
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			t.Error(err)
			return
		}
		defer c.CloseNow()
		for {
			typ, b, err := c.Read(r.Context())
			if err != nil {
				return
			}
			if err := c.Write(r.Context(), typ, b); err != nil {
				return
			}
		}
	}), &http.Server{ReadHeaderTimeout: timeout, IdleTimeout: timeout}, nil,
		&HandlerOptions{BodyTimeout: timeout, WriteTimeout: timeout, RequestBytes: 1024})

	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws://"+addr+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	for i := range 3 {
		if i > 0 {
			<-time.After(3 * timeout) // the line is idle past every timeout
		}
		msg := fmt.Sprintf(`{"n":%d}`, i)
		if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		_, b, err := c.Read(ctx)
		if err != nil || !json.Valid(b) || string(b) != msg {
			t.Fatalf("echo %d: %q, %v", i, b, err)
		}
	}
}

// A repeated event is logged the first time, then at most once an interval, counting the rest.
func TestRateLog(t *testing.T) {
	r := rateLog{every: time.Hour}
	if n, ok := r.due(); !ok || n != 1 {
		t.Errorf("first: %d, %v; want 1, logged", n, ok)
	}
	for range 5 {
		if _, ok := r.due(); ok {
			t.Fatal("logged again within the interval")
		}
	}
	r.last = time.Now().Add(-2 * time.Hour)
	if n, ok := r.due(); !ok || n != 6 {
		t.Errorf("after the interval: %d, %v; want 6 (5 held back and this one), logged", n, ok)
	}
}

// Many connections opened and closed at once leave nothing counted.
func TestListenerConcurrent(t *testing.T) {
	released := make(chan struct{}, 64)
	addr, ln := serve(t, ok, nil, &ListenerOptions{Connections: 8, PerAddress: 8, onRelease: func() { released <- struct{}{} }}, nil)
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			c, err := net.DialTimeout("tcp", addr, waitFor)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
			c.SetReadDeadline(time.Now().Add(waitFor))
			io.Copy(io.Discard, c)
		})
	}
	wg.Wait()
	for range 32 {
		select {
		case <-released:
		case <-time.After(waitFor):
			t.Fatal("not every connection was released")
		}
	}
	// The server's Accept holds a slot while it waits for the next connection.
	if got := ln.Open(); got != 0 || len(ln.slots) > 1 || len(ln.byAddr) != 0 {
		t.Errorf("Open() %d, slots %d, addresses %d; want none but Accept's", got, len(ln.slots), len(ln.byAddr))
	}
}
