package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
)

// Options configure a Server.
type Options struct {
	// Ledger receives everything the server sends and sees. Required.
	Ledger *Ledger
	// Addr is where to listen; "" means a free port on 127.0.0.1. Restarts come back on the
	// address first bound.
	Addr string
	// ReadLimit bounds the frames the device sends; 0 means 1 MiB.
	ReadLimit int64
}

// RegFault is how the server mistreats one registration.
type RegFault int

const (
	RegAccept RegFault = iota // answered with a result at once: the well-behaved case
	RegRefuse                 // answered with a JSON-RPC error
	RegSlow                   // answered with a result after Delay, shorter than the device's RegisterTimeout
	RegSilent                 // never answered
	RegLate                   // answered with a result after Delay, past the device's RegisterTimeout
	RegOddAck                 // answered with a result that is not the protocol's object
)

var regFaultNames = [...]string{"accept", "refuse", "slow", "silent", "late", "odd-ack"}

func (f RegFault) String() string {
	if f < 0 || int(f) >= len(regFaultNames) {
		return fmt.Sprintf("RegFault(%d)", int(f))
	}
	return regFaultNames[f]
}

// RegPolicy is the treatment of one registration.
type RegPolicy struct {
	Fault RegFault
	Delay time.Duration // for RegSlow and RegLate
}

// Server is the hostile stand-in agent server. Use Start to make one.
type Server struct {
	opts Options
	led  *Ledger
	addr string

	mu        sync.Mutex
	up        bool
	closed    bool
	hs        *http.Server
	serveDone chan struct{}
	lines     map[int]*Line
	nextLine  int
	newest    *Line // the last line whose registration was accepted
	regQueue  []RegPolicy

	wg sync.WaitGroup // line handlers and delayed registration answers
}

// Start returns a Server listening on opts.Addr.
func Start(opts *Options) (*Server, error) {
	if opts == nil || opts.Ledger == nil {
		return nil, errors.New("chaos: Options.Ledger is required")
	}
	o := *opts
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	if o.ReadLimit <= 0 {
		o.ReadLimit = 1 << 20
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	s := &Server{opts: o, led: o.Ledger, addr: ln.Addr().String(), lines: make(map[int]*Line)}
	s.serve(ln)
	return s, nil
}

// URL is the ws:// address devices dial; it stays the same across restarts.
func (s *Server) URL() string { return "ws://" + s.addr + "/" }

// connKey finds a request's stallConn in its context.
type connKey struct{}

// serve starts an HTTP server on ln and marks the server up.
func (s *Server) serve(ln net.Listener) {
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 5 * time.Second,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, connKey{}, c)
		},
		ErrorLog: log.New(io.Discard, "", 0),
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		hs.Serve(stallListener{ln})
	}()
	s.mu.Lock()
	s.hs, s.serveDone, s.up = hs, done, true
	s.mu.Unlock()
	s.led.serverUp(time.Now())
}

// stopServing closes the listener and the lines open on it, and waits until they have ended.
func (s *Server) stopServing(mode DropMode) {
	s.mu.Lock()
	s.up = false
	s.newest = nil
	hs, done := s.hs, s.serveDone
	lines := make([]*Line, 0, len(s.lines))
	for _, l := range s.lines {
		lines = append(lines, l)
	}
	s.mu.Unlock()
	if hs != nil {
		hs.Close()
		<-done
	}
	for _, l := range lines {
		l.Drop(mode)
	}
	for _, l := range lines {
		<-l.done
	}
}

// Restart closes the listener and every line (in the given way), stays away for down, and comes
// back on the same address. The device sees connections refused until then.
func (s *Server) Restart(ctx context.Context, down time.Duration, mode DropMode) error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return errors.New("chaos: Restart after Close")
	}
	s.led.serverDown(time.Now())
	s.stopServing(mode)
	t := time.NewTimer(down)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	ln, err := listenAgain(ctx, s.addr)
	if err != nil {
		return err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return errors.New("chaos: closed during Restart")
	}
	s.mu.Unlock()
	s.serve(ln)
	return nil
}

// listenAgain binds addr again. The port was ours a moment ago, but until the kernel lets go of
// it (or while a dial of the device's briefly holds it as a local port) the bind can fail: there
// is no event to wait for, so it retries, for a bounded time.
func listenAgain(ctx context.Context, addr string) (net.Listener, error) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		ln, err := net.Listen("tcp", addr)
		if err == nil {
			return ln, nil
		}
		if !errors.Is(err, syscall.EADDRINUSE) || time.Now().After(deadline) {
			return nil, fmt.Errorf("chaos: listening again on %s: %w", addr, err)
		}
		select {
		case <-time.After(10 * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Close stops listening, closes every line and waits for the server's goroutines.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.stopServing(DropClose)
	s.wg.Wait()
	return nil
}

// QueueRegistration makes the next registrations (one per policy, in order) be treated so;
// registrations after them are accepted at once.
func (s *Server) QueueRegistration(p ...RegPolicy) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.regQueue = append(s.regQueue, p...)
}

// WaitReady waits for a line whose registration the server has accepted and that is still up,
// and returns it.
func (s *Server) WaitReady(ctx context.Context) (*Line, error) {
	var l *Line
	err := s.led.Await(ctx, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		l = s.newest
		return l != nil && !l.ended()
	})
	if err != nil {
		return nil, fmt.Errorf("chaos: waiting for a registered line: %w", err)
	}
	return l, nil
}

// ServeHTTP accepts one device connection and reads it until it ends.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := r.Context().Value(connKey{}).(*stallConn)
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return
	}
	ws.SetReadLimit(s.opts.ReadLimit)
	s.mu.Lock()
	if !s.up || s.closed || raw == nil {
		s.mu.Unlock()
		ws.CloseNow()
		return
	}
	s.nextLine++
	l := &Line{id: s.nextLine, srv: s, ws: ws, raw: raw, done: make(chan struct{})}
	s.lines[l.id] = l
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()

	s.led.lineOpened(l.id, time.Now())
	for {
		typ, data, err := ws.Read(context.Background())
		if err != nil {
			l.end(err)
			break
		}
		s.receive(l, typ, data)
	}
	s.mu.Lock()
	delete(s.lines, l.id)
	s.mu.Unlock()
}

// wireMsg is any JSON-RPC message, decoded loosely so the server can say what is wrong with it.
type wireMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// receive judges one frame from the device: a registration is answered by policy, a response
// goes to the ledger, anything else is a violation.
func (s *Server) receive(l *Line, typ websocket.MessageType, data []byte) {
	if typ != websocket.MessageText {
		s.led.deviceProblem(l.id, "the device sent a %v frame: %s", typ, clipText(string(data)))
		return
	}
	if !utf8.Valid(data) {
		// RFC 6455 section 5.6: a text frame is UTF-8; a strict server fails the line with 1007.
		s.led.deviceProblem(l.id, "the device sent a text frame that is not valid UTF-8: %q", clipText(string(data)))
	}
	var m wireMsg
	if err := json.Unmarshal(data, &m); err != nil {
		s.led.deviceProblem(l.id, "the device sent a frame that is not a JSON-RPC message (%v): %s", err, clipText(string(data)))
		return
	}
	if m.JSONRPC != "2.0" {
		s.led.deviceProblem(l.id, `the device sent a message without "jsonrpc":"2.0": %s`, clipText(string(data)))
	}
	switch {
	case m.Method != nil:
		if *m.Method != protocol.MethodRegisterTools || m.ID == nil {
			s.led.deviceProblem(l.id, "the device sent an unexpected request or notification: %s", clipText(string(data)))
			return
		}
		s.register(l, m)
	case m.Result != nil && m.Error != nil:
		s.led.deviceProblem(l.id, "the device sent a response with both result and error: %s", clipText(string(data)))
	case m.Result != nil:
		s.led.response(l.id, m.ID, 0, true)
	case m.Error != nil:
		s.led.response(l.id, m.ID, m.Error.Code, false)
	default:
		s.led.deviceProblem(l.id, "the device sent a message that is neither request nor response: %s", clipText(string(data)))
	}
}

// register answers a registration request as the next queued policy says.
func (s *Server) register(l *Line, m wireMsg) {
	s.led.registration(l.id, time.Now())
	var p protocol.RegisterParams[[]tools.Declaration]
	if err := json.Unmarshal(m.Params, &p); err != nil || p.MAC == "" || len(p.Tools) == 0 {
		s.led.deviceProblem(l.id, "registration params without a MAC or tools: %s", clipText(string(m.Params)))
	}
	s.mu.Lock()
	var pol RegPolicy
	if len(s.regQueue) > 0 {
		pol = s.regQueue[0]
		s.regQueue = s.regQueue[1:]
	}
	l.regID = m.ID
	s.mu.Unlock()

	ack := responseFrame(m.ID, `{"status":"registered","message":"chaos"}`)
	switch pol.Fault {
	case RegAccept:
		s.accept(l, ack)
	case RegRefuse:
		s.led.closeOK(l.id, false)
		l.write(websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":`+string(m.ID)+`,"error":{"code":-32000,"message":"unknown device"}}`))
	case RegSilent:
		s.led.closeOK(l.id, true)
	case RegOddAck:
		// The device may take it or leave it; either way it must carry on.
		s.led.closeOK(l.id, false)
		s.accept(l, responseFrame(m.ID, `"registered"`))
	case RegSlow, RegLate:
		if pol.Fault == RegLate {
			s.led.closeOK(l.id, true)
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			t := time.NewTimer(pol.Delay)
			defer t.Stop()
			select {
			case <-t.C:
			case <-l.done:
				return
			}
			if pol.Fault == RegLate {
				l.write(websocket.MessageText, ack) // the device has given up by now
				return
			}
			s.accept(l, ack)
		}()
	}
}

// accept sends the registration's acceptance and makes the line the one WaitReady returns.
func (s *Server) accept(l *Line, ack []byte) {
	if err := l.write(websocket.MessageText, ack); err != nil {
		return
	}
	s.mu.Lock()
	if s.up {
		s.newest = l
	}
	s.mu.Unlock()
	s.led.registrationAccepted(l.id)
}

func responseFrame(id json.RawMessage, result string) []byte {
	return []byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + result + `}`)
}
