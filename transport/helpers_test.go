package transport

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/sourcegraph/jsonrpc2"

	"github.com/devicectl/devicectl/internal/testing/leakcheck"
	"github.com/devicectl/devicectl/internal/testing/logbuf"
)

// waitTimeout bounds every wait in these tests; reaching it is a failure,
// never the expected path.
const waitTimeout = 10 * time.Second

// leakCheck fails the test if goroutines it started outlive it; call it first.
func leakCheck(t *testing.T) { leakcheck.Check(t) }

// newTestLogger logs everything, debug included, as text into the buffer.
func newTestLogger() (*slog.Logger, *logbuf.Buffer) {
	lb := new(logbuf.Buffer)
	return lb.Logger(), lb
}

// rawServer is a WebSocket server that hands each accepted coder/websocket
// connection to the test, so the test writes and reads exact bytes.
type rawServer struct {
	*httptest.Server
	conns   chan *websocket.Conn
	headers chan http.Header
}

func newRawServer(t testing.TB, opts *websocket.AcceptOptions) *rawServer {
	t.Helper()
	rs := &rawServer{conns: make(chan *websocket.Conn, 4), headers: make(chan http.Header, 4)}
	rs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rs.headers <- r.Header.Clone()
		c, err := websocket.Accept(w, r, opts)
		if err != nil {
			t.Errorf("server: accept: %v", err)
			return
		}
		c.SetReadLimit(-1)
		rs.conns <- c // the test owns it from here; hijacked, it outlives this handler
	}))
	t.Cleanup(func() {
		rs.Close()
		for {
			select {
			case c := <-rs.conns:
				c.CloseNow()
			default:
				return
			}
		}
	})
	return rs
}

func (rs *rawServer) url() string { return "ws" + strings.TrimPrefix(rs.URL, "http") }

// accept returns the next connection the server accepted, closed when the
// test ends.
func (rs *rawServer) accept(t *testing.T) *websocket.Conn {
	t.Helper()
	select {
	case c := <-rs.conns:
		t.Cleanup(func() { c.CloseNow() })
		return c
	case <-time.After(waitTimeout):
		t.Fatal("server accepted no connection")
		return nil
	}
}

// readFrame reads one message from a raw connection.
func readFrame(t *testing.T, c *websocket.Conn) (websocket.MessageType, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	typ, b, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("server: read: %v", err)
	}
	return typ, b
}

func writeFrame(t *testing.T, c *websocket.Conn, typ websocket.MessageType, b []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if err := c.Write(ctx, typ, b); err != nil {
		t.Fatalf("server: write: %v", err)
	}
}

// handlerFunc adapts a function to jsonrpc2.Handler.
type handlerFunc func(ctx context.Context, c *jsonrpc2.Conn, r *jsonrpc2.Request)

func (f handlerFunc) Handle(ctx context.Context, c *jsonrpc2.Conn, r *jsonrpc2.Request) { f(ctx, c, r) }

// echoResult is what echoHandler replies with.
type echoResult struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// echoHandler answers every request with its method and params and sends
// notifications to notes (when not nil).
func echoHandler(notes chan<- *jsonrpc2.Request) jsonrpc2.Handler {
	return handlerFunc(func(ctx context.Context, c *jsonrpc2.Conn, r *jsonrpc2.Request) {
		if r.Notif {
			if notes != nil {
				notes <- r
			}
			return
		}
		res := echoResult{Method: r.Method}
		if r.Params != nil {
			res.Params = *r.Params
		}
		_ = c.Reply(ctx, r.ID, res)
	})
}

// dialConn dials url and runs a jsonrpc2.Conn with h over the Stream; both
// are closed when the test ends.
func dialConn(t *testing.T, url string, opts *DialOptions, h jsonrpc2.Handler) (*jsonrpc2.Conn, *Stream) {
	t.Helper()
	s := mustDial(t, url, opts)
	var logger *slog.Logger
	if opts != nil {
		logger = opts.Logger
	}
	conn := NewConn(context.Background(), s, h, logger)
	t.Cleanup(func() {
		conn.Close()
		<-conn.DisconnectNotify()
		s.Close()
	})
	return conn, s
}

// waitDone waits for a Stream to be torn down.
func waitDone(t *testing.T, s *Stream) {
	t.Helper()
	select {
	case <-s.Done():
	case <-time.After(waitTimeout):
		t.Fatal("the stream is still up")
	}
}

// proxy is a TCP relay between a client and a server that the test can
// freeze: a frozen proxy forwards nothing in either direction, the way a line
// goes half-open when a NAT drops its state.
type proxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	frozen bool
	thaw   chan struct{} // closed by Close
	conns  []net.Conn
	closed bool

	wg sync.WaitGroup
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, thaw: make(chan struct{})}
	p.wg.Go(p.serve)
	t.Cleanup(p.Close)
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) serve() {
	for {
		down, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			down.Close()
			continue
		}
		if !p.track(down, up) {
			return
		}
		p.wg.Go(func() { p.pipe(up, down) })
		p.wg.Go(func() { p.pipe(down, up) })
	}
}

func (p *proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		for _, c := range cs {
			c.Close()
		}
		return false
	}
	p.conns = append(p.conns, cs...)
	return true
}

// pipe copies src to dst, holding whatever it read while the proxy is frozen.
func (p *proxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			frozen := p.frozen
			p.mu.Unlock()
			if frozen {
				<-p.thaw // never forwarded: the proxy only thaws to close
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *proxy) freeze() {
	p.mu.Lock()
	p.frozen = true
	p.mu.Unlock()
}

func (p *proxy) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	close(p.thaw)
	conns := p.conns
	p.mu.Unlock()
	p.ln.Close()
	for _, c := range conns {
		c.Close()
	}
	p.wg.Wait()
}

// idOf returns the raw "id" of a JSON-RPC frame.
func idOf(t *testing.T, frame []byte) json.RawMessage {
	t.Helper()
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(frame, &m); err != nil {
		t.Fatalf("frame %s: %v", frame, err)
	}
	return m.ID
}

// isClosedErr reports an error from a connection that is gone.
func isClosedErr(err error) bool {
	return err != nil && (errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) || websocket.CloseStatus(err) != -1)
}

// newAcceptServer serves WebSockets with Accept and hands each Stream to the
// test, which must close it.
func newAcceptServer(t *testing.T, opts *AcceptOptions, streams chan<- *Stream) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, err := Accept(w, r, opts)
		if err != nil {
			t.Errorf("Accept: %v", err)
			return
		}
		streams <- s
	}))
	t.Cleanup(srv.Close)
	return srv
}

// serveRead runs the device's kind of read loop over s: each request is
// answered with echoResult through WriteResult, every other message goes to
// msgs (when not nil). The loop ends with the line; the test's cleanup closes
// s and waits for it.
func serveRead(t testing.TB, s *Stream, msgs chan<- *Message) {
	done := answerRequests(s, func(m *Message) any { return echoResult{Method: m.Method, Params: m.Params} }, msgs)
	t.Cleanup(func() {
		s.Close()
		<-done
	})
}

// answerRequests is the device's kind of read loop over s, on a goroutine of its own: each request
// is answered with answer(m) through WriteResult, inline; every other message goes to msgs (when
// not nil). It ends with the line, and closes the channel it returns.
func answerRequests(s *Stream, answer func(*Message) any, msgs chan<- *Message) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			m, err := s.Read()
			if err != nil {
				return
			}
			if m.Kind == KindRequest {
				if err := s.WriteResult(m.ID, answer(m)); err != nil {
					return
				}
				continue
			}
			if msgs != nil {
				select {
				case msgs <- m:
				case <-s.Done():
					return
				}
			}
		}
	}()
	return done
}

// mustDial dials url and fails tb if it cannot; the context bounds only the handshake.
func mustDial(tb testing.TB, url string, opts *DialOptions) *Stream {
	tb.Helper()
	s, err := Dial(context.Background(), url, opts)
	if err != nil {
		tb.Fatalf("Dial: %v", err)
	}
	return s
}

// dialRead dials url and serves the Stream with serveRead.
func dialRead(t testing.TB, url string, opts *DialOptions, msgs chan<- *Message) *Stream {
	t.Helper()
	s := mustDial(t, url, opts)
	serveRead(t, s, msgs)
	return s
}

// writeWhileAnswering has the device write from many goroutines, each call of write(w, i) being
// writer w's i-th frame, while the server c sends malformed frames that the device answers with
// parseErrorFrame. Every frame must arrive whole: each is either such an answer or one of the
// written frames, as isWritten tells; written names those in a failure.
func writeWhileAnswering(t *testing.T, c *websocket.Conn, written string, write func(w, i int) error, isWritten func([]byte) bool) {
	t.Helper()
	const writers, each, bad = 8, 25, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if err := write(w, i); err != nil {
					t.Errorf("write: %v", err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for range bad {
			writeFrame(t, c, websocket.MessageText, []byte(`{`))
		}
	})

	frames, answers := 0, 0
	for frames+answers < writers*each+bad {
		_, b := readFrame(t, c)
		switch {
		case string(b) == parseErrorFrame:
			answers++
		case isWritten(b):
			frames++
		default:
			t.Fatalf("unexpected frame %q", b)
		}
	}
	wg.Wait()
	if frames != writers*each || answers != bad {
		t.Errorf("got %d %s and %d answers, want %d and %d", frames, written, answers, writers*each, bad)
	}
}
