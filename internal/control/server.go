package control

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/devicectl/devicectl/protocol"
)

// CallFunc runs one tool and returns its result, or an error a *device.CallError describes
// (device.Agent.Call is one).
type CallFunc func(ctx context.Context, tool string, input json.RawMessage) (json.RawMessage, error)

// Options configure a Server. Zero fields take the defaults noted beside them.
type Options struct {
	Call         CallFunc      // required
	Logger       *slog.Logger  // nil: discarded
	Mode         fs.FileMode   // the socket's permissions (default 0660: the owner and its group)
	MaxClients   int           // connections served at once (default 8); more are answered -32002
	MaxRequest   int           // longest request line in bytes (default 1 MiB); longer: -32600
	IdleTimeout  time.Duration // to send the request line, from the connect (default 10s)
	WriteTimeout time.Duration // to take the response (default 10s)
}

// Defaults of Options.
const (
	DefaultMode       fs.FileMode = 0o660
	DefaultMaxClients             = 8
	DefaultMaxRequest             = 1 << 20
	DefaultTimeout                = 10 * time.Second
)

// withDefaults copies o with the defaults filled in.
func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Mode == 0 {
		c.Mode = DefaultMode
	}
	if c.MaxClients <= 0 {
		c.MaxClients = DefaultMaxClients
	}
	if c.MaxRequest <= 0 {
		c.MaxRequest = DefaultMaxRequest
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = DefaultTimeout
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = DefaultTimeout
	}
	return c
}

// ErrInUse is a socket path another process listens on.
var ErrInUse = errors.New("another process listens on it (is devicectl run already running?)")

// Server serves tool calls on a Unix socket. Listen starts it; Close stops it and removes the
// socket.
type Server struct {
	path   string
	ln     *net.UnixListener
	file   os.FileInfo // the socket file Listen made: Close removes only that one
	opts   Options
	log    *slog.Logger
	ctx    context.Context // the calls'; cancelled when Close gives up waiting for them
	cancel context.CancelFunc
	slots  chan struct{} // one per connection being served
	// One per refused connection being hung up on (see refuse); past MaxClients more, a
	// connection is closed with no answer.
	refusing chan struct{}
	calls    atomic.Int64

	accepted chan struct{}  // closed when the accept loop has returned
	wg       sync.WaitGroup // the connections' goroutines
	mu       sync.Mutex
	conns    map[*net.UnixConn]struct{}
	once     sync.Once
}

// Listen makes the socket at path, with opts.Mode, and serves it until Close. A socket file
// left at path by a process that is gone (nothing accepts on it) is replaced; one that something
// listens on is ErrInUse, and a path that is not a socket is refused, never removed.
func Listen(path string, opts *Options) (*Server, error) {
	o := opts.withDefaults()
	if o.Call == nil {
		return nil, errors.New("control: no Call function")
	}
	ln, err := listen(path, o.Mode)
	if err != nil {
		return nil, err
	}
	fi, err := os.Lstat(path)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("control socket %s: %w", path, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		path: path, ln: ln, file: fi, opts: o, ctx: ctx, cancel: cancel,
		log:      o.Logger.With("component", "control"),
		slots:    make(chan struct{}, o.MaxClients),
		refusing: make(chan struct{}, o.MaxClients),
		accepted: make(chan struct{}),
		conns:    make(map[*net.UnixConn]struct{}),
	}
	go s.acceptLoop()
	s.log.Info("serving tool calls on the control socket", "path", path, "mode", fmt.Sprintf("%04o", o.Mode))
	return s, nil
}

// listen makes a socket at path with mode. It is bound in a private directory beside path, given
// its mode there and only then linked into place, so that no client can connect before the mode
// is right, whatever the umask. A stale socket file at path is replaced; the link fails, as a
// bind would, if another process has put its socket there meanwhile.
func listen(path string, mode fs.FileMode) (*net.UnixListener, error) {
	if err := removeStale(path); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(filepath.Dir(path), ".c") // 0700; short: socket paths are limited
	if err != nil {
		return nil, fmt.Errorf("control socket %s: %w", path, err)
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, "s")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("control socket %s: %w", path, err)
	}
	ln.SetUnlinkOnClose(false) // Close removes the file itself, if it is still this one
	if err := os.Chmod(tmp, mode); err != nil {
		ln.Close()
		return nil, fmt.Errorf("setting the mode of %s: %w", path, err)
	}
	if err := os.Link(tmp, path); err != nil {
		ln.Close()
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%s: %w", path, ErrInUse)
		}
		return nil, fmt.Errorf("control socket %s: %w", path, err)
	}
	return ln, nil
}

// removeStale removes a socket file at path that nobody accepts on (a daemon that was killed left
// it behind). Anything else there is an error: a socket in use, or a file that is not a socket.
func removeStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("control socket %s: %w", path, err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("%s exists and is not a socket (%s); remove it or choose another path", path, fi.Mode().Type())
	}
	c, derr := net.DialTimeout("unix", path, time.Second)
	if derr == nil {
		c.Close()
		return fmt.Errorf("%s: %w", path, ErrInUse)
	}
	if !errors.Is(derr, syscall.ECONNREFUSED) {
		return fmt.Errorf("%s exists and cannot be tried: %w", path, derr)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("removing the stale socket %s: %w", path, err)
	}
	return nil
}

// Path is where the server listens.
func (s *Server) Path() string { return s.path }

// Calls counts the tool calls the server has answered.
func (s *Server) Calls() int64 { return s.calls.Load() }

// Close stops accepting, lets the calls in progress finish for at most grace, then cancels
// them, waits for every connection's goroutine and removes the socket file. Clients still
// waiting to send their request are dropped at once.
func (s *Server) Close(grace time.Duration) {
	s.once.Do(func() {
		s.ln.Close()
		<-s.accepted
		s.mu.Lock()
		for c := range s.conns {
			c.SetReadDeadline(time.Now()) // one still reading its request gives up now
		}
		s.mu.Unlock()
		done := make(chan struct{})
		go func() { // owned: Close waits for done below
			s.wg.Wait()
			close(done)
		}()
		t := time.NewTimer(grace)
		select {
		case <-done:
		case <-t.C:
			s.cancel()
			<-done
		}
		t.Stop()
		s.cancel()
		// Only the file this server made: a daemon started since may have replaced it.
		if fi, err := os.Lstat(s.path); err == nil && os.SameFile(fi, s.file) {
			if err := os.Remove(s.path); err != nil {
				s.log.Warn("removing the control socket", "path", s.path, "err", err)
			}
		}
	})
}

func (s *Server) acceptLoop() {
	defer close(s.accepted)
	for {
		c, err := s.ln.AcceptUnix()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			// Out of file descriptors, say: wait a little rather than spin.
			s.log.Warn("accepting on the control socket", "err", err)
			time.Sleep(100 * time.Millisecond)
			continue
		}
		select {
		case s.slots <- struct{}{}:
		default:
			s.refuse(c)
			continue
		}
		// Before the goroutine starts, so that Close sees it (it waits for this loop first).
		c.SetReadDeadline(time.Now().Add(s.opts.IdleTimeout))
		s.mu.Lock()
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Add(1)
		go s.serve(c)
	}
}

// refuse answers a client past MaxClients with -32002 and hangs up. The line fits in the
// socket's buffer, so the write does not block the accept loop; the deadline makes sure. The
// hang-up lingers (lingerClose) on a goroutine of its own, as many at once as MaxClients; past
// that, a flood gets no answer at all.
func (s *Server) refuse(c *net.UnixConn) {
	s.log.Warn("control socket: too many clients; one refused", "max_clients", s.opts.MaxClients)
	select {
	case s.refusing <- struct{}{}:
	default:
		c.Close()
		return
	}
	c.SetWriteDeadline(time.Now().Add(time.Second))
	writeResponse(c, &Response{ID: nullID, Error: newError(protocol.CodeBusy, "device busy",
		fmt.Sprintf("%d clients are using the control socket already", s.opts.MaxClients))})
	s.wg.Go(func() {
		defer func() { <-s.refusing }()
		lingerClose(c)
		c.Close()
	})
}

// serve answers the one request of c.
func (s *Server) serve(c *net.UnixConn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		c.Close()
		<-s.slots
	}()
	line, err := readRequest(c, s.opts.MaxRequest)
	var resp *Response
	switch {
	case errors.Is(err, errTooLong):
		resp = &Response{ID: nullID, Error: newError(protocol.CodeInvalidRequest, "Invalid Request",
			fmt.Sprintf("the request is longer than %d bytes", s.opts.MaxRequest))}
	case err != nil:
		// Idle past IdleTimeout, gone before a whole line, or the server closing.
		s.log.Debug("control client sent no request", "err", err)
		return
	default:
		resp = s.handle(line)
	}
	c.SetWriteDeadline(time.Now().Add(s.opts.WriteTimeout))
	if err := writeResponse(c, resp); err != nil {
		s.log.Debug("control client did not take its response", "err", err)
		return
	}
	if errors.Is(err, errTooLong) {
		lingerClose(c)
	}
}

// lingerClose reads and drops what the client is still sending, for a moment, before the
// connection closes: closed with unread data, it would reset, and the client could lose the
// answer it has not read yet.
func lingerClose(c *net.UnixConn) {
	c.CloseWrite()
	c.SetReadDeadline(time.Now().Add(lingerTime))
	io.Copy(io.Discard, io.LimitReader(c, lingerBytes))
}

// How long and how much lingerClose reads at most.
const (
	lingerTime  = 500 * time.Millisecond
	lingerBytes = 4 << 20
)

// handle runs the request line and returns its response.
func (s *Server) handle(line []byte) *Response {
	if !json.Valid(line) {
		var v any
		return &Response{ID: nullID, Error: newError(protocol.CodeParseError, "Parse error", json.Unmarshal(line, &v).Error())}
	}
	var req Request
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return &Response{ID: nullID, Error: newError(protocol.CodeInvalidRequest, "Invalid Request",
			"want one object {\"tool\": NAME, \"input\": {...}}: "+err.Error())}
	}
	id := nullID
	if len(req.ID) > 0 {
		if !validID(req.ID) {
			return &Response{ID: nullID, Error: newError(protocol.CodeInvalidRequest, "Invalid Request", "id must be a string, a number or null")}
		}
		id = req.ID
	}
	if req.Tool == "" {
		return &Response{ID: id, Error: newError(protocol.CodeInvalidRequest, "Invalid Request", "the request names no tool: want {\"tool\": NAME, \"input\": {...}}")}
	}
	input := req.Input
	if len(input) == 0 || string(input) == "null" {
		input = json.RawMessage("{}")
	}
	start := time.Now()
	res, err := s.opts.Call(s.ctx, req.Tool, input)
	s.calls.Add(1)
	if err != nil {
		e := ErrorOf(err)
		s.log.Info("tool call on the control socket", "tool", req.Tool, "code", e.Code, "err", e.Message, "duration", time.Since(start).Round(time.Millisecond))
		return &Response{ID: id, Error: e}
	}
	s.log.Info("tool call on the control socket", "tool", req.Tool, "duration", time.Since(start).Round(time.Millisecond))
	if len(res) == 0 {
		res = nullID // a tool's result may be null; the member stays
	}
	return &Response{ID: id, Result: res}
}

// validID reports whether raw is a JSON-RPC id: a string, a number or null.
func validID(raw json.RawMessage) bool {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	switch v.(type) {
	case string, float64, nil:
		return true
	}
	return false
}

var errTooLong = errors.New("request too long")

// readRequest reads one line of at most max bytes (its newline aside). A client that
// half-closes after its request need not end it with a newline.
func readRequest(r io.Reader, max int) ([]byte, error) {
	br := bufio.NewReaderSize(io.LimitReader(r, int64(max)+1), 4096)
	line, err := br.ReadBytes('\n')
	if len(bytes.TrimSuffix(line, []byte("\n"))) > max {
		return nil, errTooLong
	}
	if errors.Is(err, io.EOF) && len(bytes.TrimSpace(line)) > 0 {
		return line, nil
	}
	if err != nil {
		return nil, err
	}
	return line, nil
}

// writeResponse writes r as one line.
func writeResponse(w io.Writer, r *Response) error {
	r.JSONRPC = "2.0"
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
