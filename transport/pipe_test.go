package transport

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/coder/websocket"
)

// A pipeLine is a WebSocket connection over net.Pipe, with no socket and no
// http.Server, so that a test can run inside a testing/synctest bubble: a
// goroutine blocked on a pipe is durably blocked, one blocked on a socket is
// not. The keepalive and write watchdogs then run on the bubble's fake clock.
type pipeLine struct {
	device *Stream         // the dialling side, a Stream
	server *websocket.Conn // the accepting side, bare
	end    *freezable      // the server's end of the pipe
}

// newPipeLine connects a device Stream with opts (dialled as Dial would,
// minus the network) to a bare server connection that answers pings while
// it reads. The server side is closed when the test ends; the test closes
// the device (serveRead does).
func newPipeLine(t *testing.T, opts DialOptions, server *websocket.AcceptOptions) *pipeLine {
	t.Helper()
	devEnd, srvEnd := net.Pipe()
	end := &freezable{Conn: srvEnd, closed: make(chan struct{})}

	accepted := make(chan *websocket.Conn, 1)
	go func() {
		c, err := acceptOn(end, server)
		if err != nil {
			t.Errorf("server handshake: %v", err)
		}
		accepted <- c
	}()
	tr := &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) { return devEnd, nil }}
	conn, _, err := websocket.Dial(context.Background(), "ws://pipe/", &websocket.DialOptions{HTTPClient: &http.Client{Transport: tr}})
	srv := <-accepted
	if err != nil || srv == nil {
		t.Fatalf("handshake over the pipe: %v", err)
	}
	t.Cleanup(func() { srv.CloseNow() }) // after the test's own cleanups, which close the device
	cfg := newStreamConfig(opts.ReadLimit, opts.PingInterval, opts.PingTimeout, opts.WriteTimeout, opts.Logger)
	return &pipeLine{device: newStream(conn, cfg, cfg.logger), server: srv, end: end}
}

// acceptOn serves one WebSocket handshake on c: it reads the request and
// hands websocket.Accept a ResponseWriter that hijacks c.
func acceptOn(c net.Conn, opts *websocket.AcceptOptions) (*websocket.Conn, error) {
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		return nil, err
	}
	return websocket.Accept(&hijacker{conn: c, br: br, header: http.Header{}}, req, opts)
}

// hijacker is the http.ResponseWriter of a handshake that only switches
// protocols: Hijack writes the status line and headers itself, as
// net/http's server does for a 101 before handing the connection over.
type hijacker struct {
	conn   net.Conn
	br     *bufio.Reader
	header http.Header
	status int
}

func (h *hijacker) Header() http.Header         { return h.header }
func (h *hijacker) WriteHeader(status int)      { h.status = status }
func (h *hijacker) Write(b []byte) (int, error) { return 0, errors.New("hijacker: no body") }

func (h *hijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	bw := bufio.NewWriter(h.conn)
	fmt.Fprintf(bw, "HTTP/1.1 %d %s\r\n", h.status, http.StatusText(h.status))
	if err := h.header.Write(bw); err != nil {
		return nil, nil, err
	}
	bw.WriteString("\r\n")
	if err := bw.Flush(); err != nil {
		return nil, nil, err
	}
	return h.conn, bufio.NewReadWriter(h.br, bw), nil
}

// freezable is a pipe end that the test can freeze: then nothing passes in
// either direction, the way a line goes half-open when a NAT drops its
// state. Close ends a frozen read or write.
type freezable struct {
	net.Conn
	mu     sync.Mutex
	frozen bool
	closed chan struct{}
	once   sync.Once
}

func (f *freezable) freeze() {
	f.mu.Lock()
	f.frozen = true
	f.mu.Unlock()
}

// hold blocks while the end is frozen, until it is closed.
func (f *freezable) hold() error {
	f.mu.Lock()
	frozen := f.frozen
	f.mu.Unlock()
	if !frozen {
		return nil
	}
	<-f.closed
	return net.ErrClosed
}

func (f *freezable) Read(b []byte) (int, error) {
	if err := f.hold(); err != nil {
		return 0, err
	}
	n, err := f.Conn.Read(b)
	if herr := f.hold(); herr != nil { // frozen meanwhile: what was read is lost on the line
		return 0, herr
	}
	return n, err
}

func (f *freezable) Write(b []byte) (int, error) {
	if err := f.hold(); err != nil {
		return 0, err
	}
	return f.Conn.Write(b)
}

func (f *freezable) Close() error {
	f.once.Do(func() { close(f.closed) })
	return f.Conn.Close()
}
