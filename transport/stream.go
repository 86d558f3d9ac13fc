package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/sourcegraph/jsonrpc2"
)

// ErrPingTimeout is the reason a Stream died when no pong came back within
// the ping timeout: the line is half-open or the peer is stuck.
var ErrPingTimeout = errors.New("transport: no pong within the ping timeout")

// errClosed is Err after Close: the line was closed on this side.
var errClosed = fmt.Errorf("transport: stream closed: %w", net.ErrClosed)

// keptBufferCap is the largest buffer the pool of frame buffers keeps; a
// bigger one (after a big message) is dropped.
const keptBufferCap = 64 << 10

// Stream is one JSON-RPC 2.0 line over one WebSocket: one message per text
// frame. The device and the agent's hub read it with Read and answer with the
// Write methods; a peer that wants jsonrpc2's loop (the test stand-in server)
// runs a jsonrpc2.Conn over it (NewConn), for which it is a
// jsonrpc2.ObjectStream (ReadObject, WriteObject). Either way,
// malformed frames are answered on the line (-32700 / -32600, see
// docs/protocol.md) and reading goes on; a read returns an error only when the
// line is gone.
//
// Writes may be called concurrently with everything. Read or ReadObject must
// be called from one goroutine at a time, and continuously, because
// keepalive pongs are only seen while reading; use one or the other on a
// Stream, not both.
type Stream struct {
	_    [0]func() // not comparable: a Stream is used by pointer, and == would be code for nothing
	conn *websocket.Conn
	cfg  streamConfig
	// coalesce is the connection under a dialled line (nil for an accepted one), for Flush.
	coalesce *coalescingConn
	log      *slog.Logger

	rbuf       *bytes.Buffer // the frame Read or ReadObject is at, from bufs; nil between frames
	lastMethod string        // the last method name Read decoded, reused (see methodName)

	// Writes run without deadlines of their own (a per-write timer costs
	// more than the rest of the write path); the write watch (keepalive.go)
	// enforces WriteTimeout from these counters.
	writesPending atomic.Int64
	writesDone    atomic.Uint64
	writeWatched  atomic.Bool   // the write watch is armed
	writeLast     atomic.Uint64 // writesDone at its last look
	writeStalled  atomic.Int64  // unix nanoseconds since which it has seen no write complete

	// The watchdogs' timers (keepalive.go); timedMu orders their functions with teardown.
	pingTimer    *time.Timer // nil without keepalive
	writeTimer   *time.Timer
	timedMu      sync.Mutex
	timedStopped bool

	lastHeard atomic.Int64 // unix nanoseconds of the last frame or pong from the peer
	goingAway atomic.Bool  // Shutdown: close with 1001, not 1000

	once     sync.Once      // teardown
	cause    error          // why the line is gone; written before done closes
	closeErr error          // what Close reports; written before done closes
	done     chan struct{}  // closed at the end of teardown
	stop     chan struct{}  // closed by teardown
	workers  sync.WaitGroup // the watchdogs' functions running
}

var _ jsonrpc2.ObjectStream = (*Stream)(nil)

func newStream(conn *websocket.Conn, cfg streamConfig, log *slog.Logger) *Stream {
	conn.SetReadLimit(cfg.readLimit)
	s := &Stream{
		conn: conn,
		cfg:  cfg,
		log:  log,
		done: make(chan struct{}),
		stop: make(chan struct{}),
	}
	s.heard()
	s.writeTimer = time.AfterFunc(s.writeQuarter(), s.checkWrites)
	s.writeTimer.Stop() // armed by the first write
	if cfg.pingInterval > 0 {
		s.pingTimer = time.AfterFunc(cfg.pingInterval, s.ping)
	}
	return s
}

// Read returns the next well-formed message. Malformed frames are answered
// on the line (-32700 / -32600 with data.details, see docs/protocol.md) and
// skipped; an error response nobody can use (no id) is logged and skipped.
// Any string or number id is accepted and kept byte for byte, except a
// string that is not valid UTF-8, which could not be echoed in a text frame.
//
// Read returns an error only when the line is gone, and then the Stream is
// already torn down (Done is closed). Call it from one goroutine at a time,
// continuously: pongs are only seen while reading.
func (s *Stream) Read() (*Message, error) {
	for {
		typ, data, err := s.readFrame()
		if err != nil {
			return nil, err
		}
		vd := frameVerdict(typ, data)
		if vd.kind == frameRequest || vd.kind == frameResponse {
			m, err := s.message(vd.kind, &vd.env)
			if err == nil {
				s.releaseFrame()
				return m, nil
			}
			// Not expected: classify exists to rule this out.
			s.log.Error("message passed the frame rules but did not decode", "err", err, "bytes", len(data))
			vd = invalid(nil, "the message could not be decoded: "+err.Error())
		}
		s.refuse(vd, len(data))
		s.releaseFrame()
	}
}

// readFrame reads the next frame into rbuf, a buffer of the pool shared by the
// Streams, taken once a frame has come: a line waiting for its next frame
// holds none, and a server holds thousands of lines that wait. On error the
// Stream is torn down.
func (s *Stream) readFrame() (websocket.MessageType, []byte, error) {
	// No deadline and no cancellation: coder/websocket closes the socket
	// when a read's context ends, and teardown closes the connection
	// itself, which ends a blocked read.
	typ, r, err := s.conn.Reader(context.Background())
	if err == nil {
		s.heard()
		s.rbuf = getBuf()
		if _, err = s.rbuf.ReadFrom(r); err != nil {
			s.releaseFrame()
		}
	}
	if err != nil {
		err = fmt.Errorf("transport: read: %w", err)
		if errors.Is(err, websocket.ErrMessageTooBig) {
			s.log.Warn("message over the read limit: closing the connection", "limit", s.cfg.readLimit)
		}
		// Graceful: coder/websocket has already sent the close frame for a
		// protocol error or an oversized message; wait (bounded) for the
		// peer's reply so the peer reads our reason.
		s.teardown(err, true)
		return 0, nil, err
	}
	return typ, s.rbuf.Bytes(), nil
}

// releaseFrame ends the use of the frame readFrame returned: its buffer goes
// back to the pool (unless a big message grew it).
func (s *Stream) releaseFrame() {
	putBuf(s.rbuf)
	s.rbuf = nil
}

// frameVerdict classifies one frame of any type.
func frameVerdict(typ websocket.MessageType, data []byte) verdict {
	if typ != websocket.MessageText {
		return invalid(nil, "binary frame: each message must be a JSON text frame")
	}
	return classify(data)
}

// refuse answers a frameInvalid or frameUnparsable verdict on the line, or
// logs a frameDrop one.
func (s *Stream) refuse(vd verdict, size int) {
	if vd.kind == frameDrop {
		s.log.Warn("dropped an unusable error response from the peer", "details", vd.details)
		return
	}
	s.log.Warn("answered a malformed frame", "parse_error", vd.kind == frameUnparsable, "details", vd.details, "bytes", size)
	if err := s.write(appendAnswer(nil, vd)); err != nil {
		// The line is gone; the next read reports it.
		s.log.Debug("could not answer a malformed frame", "err", err)
	}
}

// ReadObject reads the next well-formed JSON-RPC message into v, which is
// what jsonrpc2 passes (its internal message type). Malformed frames are
// answered on the line and skipped as Read does; so are ids jsonrpc2 would
// change (see forConn). ReadObject returns an error only when the line is
// gone, and then the Stream is already torn down (Done is closed).
func (s *Stream) ReadObject(v any) error {
	for {
		typ, data, err := s.readFrame()
		if err != nil {
			return err
		}
		ok := s.handle(typ, data, v)
		s.releaseFrame()
		if ok {
			return nil
		}
	}
}

// handle classifies one frame and either decodes it into v (true) or answers
// or drops it (false).
func (s *Stream) handle(typ websocket.MessageType, data []byte, v any) bool {
	vd := forConn(frameVerdict(typ, data))
	switch vd.kind {
	case frameRequest, frameResponse:
		err := json.Unmarshal(data, v) // jsonrpc2's own decoder, through its UnmarshalJSON
		if err == nil {
			return true
		}
		// Not expected for jsonrpc2's message type: classify exists to rule
		// this out. Answer rather than return it, which would close the line.
		s.log.Error("message passed the frame rules but did not decode", "err", err, "bytes", len(data))
		vd = invalid(nil, "the message could not be decoded: "+err.Error())
	}
	s.refuse(vd, len(data))
	return false
}

// bufs pools the frame buffers: the writers' encode buffers and the frames read.
var bufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func getBuf() *bytes.Buffer { return bufs.Get().(*bytes.Buffer) }

func putBuf(buf *bytes.Buffer) {
	if buf.Cap() <= keptBufferCap {
		buf.Reset()
		bufs.Put(buf)
	}
}

// WriteResult writes a success response to the request with the given id, a
// JSON string or number token written as given, byte for byte. A
// json.RawMessage result is written as is (compacted); anything else through
// encoding/json.
//
// WriteResult, WriteError, WriteRequest and WriteNotification write one
// frame each and are safe for concurrent use. A write that fails, or that
// makes no progress for WriteTimeout, tears the Stream down.
func (s *Stream) WriteResult(id json.RawMessage, result any) error {
	buf := getBuf()
	defer putBuf(buf)
	return s.send(buf, appendResult(buf, id, result))
}

// WriteError writes an error response to the request with the given id (nil
// is null). data nil, or data that encodes to null, means no "data" member; a
// json.RawMessage is written as is (compacted), anything else through
// encoding/json.
func (s *Stream) WriteError(id json.RawMessage, code int64, message string, data any) error {
	buf := getBuf()
	defer putBuf(buf)
	return s.send(buf, appendError(buf, id, code, message, data))
}

// WriteRequest writes a request with the given id (a JSON string or number
// token, written as given). params nil means no "params" member.
func (s *Stream) WriteRequest(id json.RawMessage, method string, params any) error {
	buf := getBuf()
	defer putBuf(buf)
	return s.send(buf, appendIDRequest(buf, id, method, params))
}

// EncodeRequest returns the frame WriteRequest would send, byte for byte: for
// showing a request without a line to send it on.
func EncodeRequest(id json.RawMessage, method string, params any) ([]byte, error) {
	var buf bytes.Buffer
	if err := appendIDRequest(&buf, id, method, params); err != nil {
		return nil, fmt.Errorf("transport: encode: %w", err)
	}
	return buf.Bytes(), nil
}

// appendIDRequest is appendRequest for a request, which needs an id.
func appendIDRequest(buf *bytes.Buffer, id json.RawMessage, method string, params any) error {
	if id == nil {
		return fmt.Errorf("%w: a request needs an id", errBadID)
	}
	return appendRequest(buf, id, method, params)
}

// WriteNotification writes a notification (a request without an id). params
// nil means no "params" member.
func (s *Stream) WriteNotification(method string, params any) error {
	buf := getBuf()
	defer putBuf(buf)
	return s.send(buf, appendRequest(buf, nil, method, params))
}

// send writes the frame in buf unless building it failed.
func (s *Stream) send(buf *bytes.Buffer, err error) error {
	if err != nil {
		return fmt.Errorf("transport: encode: %w", err)
	}
	return s.write(buf.Bytes())
}

// WriteObject marshals obj with encoding/json (jsonrpc2's messages marshal
// themselves) and writes it as one text frame, like the Write methods.
func (s *Stream) WriteObject(obj any) error {
	buf := getBuf()
	defer putBuf(buf)
	return s.send(buf, appendValue(buf, obj))
}

func (s *Stream) write(b []byte) error {
	s.writesPending.Add(1)
	s.watchWrites()
	err := s.conn.Write(context.Background(), websocket.MessageText, b)
	s.writesDone.Add(1)
	s.writesPending.Add(-1)
	if err == nil {
		return nil
	}
	err = fmt.Errorf("transport: write: %w", err)
	if !errors.Is(err, net.ErrClosed) {
		// An I/O error: this write broke the line. (When the connection
		// was already closed, whoever closed it records why.)
		s.teardown(err, false)
	}
	return err
}

// Flush sends at once the frames that wait for the reader to read again (coalescingConn): for
// a reader that is held up, and hands the reading to another goroutine. A no-op on an accepted
// line, which writes each frame as it comes.
func (s *Stream) Flush() {
	if s.coalesce == nil {
		return
	}
	if err := s.coalesce.flush(); err != nil {
		s.teardown(fmt.Errorf("transport: write: %w", err), false)
	}
}

// Close sends a close frame (1000, normal closure), waits for the peer's
// reply (bounded by coder/websocket: 5s to write, 5s to wait), releases the
// connection and waits for its watchdogs (a ping in flight) to return. It is safe to
// call more than once and concurrently; every call returns the first one's
// result. Close after the line is already gone returns nil.
func (s *Stream) Close() error {
	s.teardown(errClosed, true)
	s.workers.Wait()
	return s.closeErr
}

// Shutdown is Close for a side that is stopping (a server shutting down): its close frame says
// 1001 going away, so that the peer can tell a shutdown from a line dropped for a fault.
func (s *Stream) Shutdown() error {
	s.goingAway.Store(true)
	return s.Close()
}

// ClosedNormally reports whether err, a line's end (Stream.Err, or an error wrapping it), is the
// peer closing it on purpose: close status 1000 (normal) or 1001 (going away).
func ClosedNormally(err error) bool {
	switch websocket.CloseStatus(err) {
	case websocket.StatusNormalClosure, websocket.StatusGoingAway:
		return true
	}
	return false
}

// LastHeard reports when the peer was last heard from: a message, or a pong to a keepalive ping.
// A live line with keepalive on is heard from at least every ping interval; a watchdog can tell a
// line that still works from one that only looks open.
func (s *Stream) LastHeard() time.Time { return time.Unix(0, s.lastHeard.Load()) }

func (s *Stream) heard() { s.lastHeard.Store(time.Now().UnixNano()) }

// Done returns a channel that is closed once the line is gone: closed by
// either side, broken, or dead (ping timeout, stuck write).
func (s *Stream) Done() <-chan struct{} { return s.done }

// Err reports why the line is gone, once Done is closed; nil before. It
// wraps ErrPingTimeout after a ping timeout, net.ErrClosed after Close, a
// websocket.CloseError when the peer closed (websocket.CloseStatus reads its
// code), websocket.ErrMessageTooBig after an oversized message, else the I/O
// error.
func (s *Stream) Err() error {
	select {
	case <-s.done:
		return s.cause
	default:
		return nil
	}
}

// teardown ends the Stream once: it records cause, closes the connection
// (gracefully with a close handshake, or at once), which ends every pending
// read, write and ping, stops the watchdogs' timers and closes done. Later
// calls wait for the first to finish and change nothing. It does not wait for
// the watchdogs, which call it; Close does. It is not inlined: each of its
// callers would carry a copy of the function it runs once (some 800 bytes of
// the board binary each), to save a call on a path taken once a line.
//
//go:noinline
func (s *Stream) teardown(cause error, graceful bool) {
	s.once.Do(func() {
		s.stopTimers()
		s.cause = cause
		var err error
		if graceful && s.goingAway.Load() {
			err = s.conn.Close(websocket.StatusGoingAway, "shutting down")
		} else if graceful {
			err = s.conn.Close(websocket.StatusNormalClosure, "")
		} else {
			err = s.conn.CloseNow()
		}
		if cause == errClosed && err != nil && !errors.Is(err, net.ErrClosed) {
			s.closeErr = fmt.Errorf("transport: close: %w", err)
		}
		close(s.stop)
		close(s.done)
		s.log.Debug("connection closed", "cause", cause)
	})
}
