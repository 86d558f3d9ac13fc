package device

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/transport"
)

// line is one connection to the server, from a completed dial to its close. Its reader is the
// only reader of the stream: it hands the server's executes to the dispatcher and runs those that
// start at once itself, instead of waking a worker (a call that takes longer than watchLimit
// is left to finish on that goroutine while another takes over the reading: line_watch.go); it
// renders mcp/ai/message notifications inline, so in arrival order and never two at once, and
// passes the answers to the device's own requests (mcp/registerTools) to whoever waits for them.
// One goroutine reads at a time. The agent's session goroutine owns the line: it starts the reader,
// sends the device's requests, and closes the line, which waits for the reading to end.
type line struct {
	stream *transport.Stream
	disp   *dispatcher
	log    *slog.Logger

	// ctx is the context of the calls the server makes on this line: cancelled once the line is
	// gone, so tools stop working for an answer nobody can receive.
	ctx    context.Context
	cancel context.CancelFunc

	// answered is set once a call of the server has been answered on this line: the line served,
	// and the back-off starts again from its base (see Backoff.ResetAfter).
	answered atomic.Bool

	voiceState // what this server said to the device's voice requests

	mu      sync.Mutex
	pending map[string]*request // the device's requests waiting for an answer, by the id's raw bytes

	watch *readerWatch // hands the reading over when the reader runs a call too long

	done chan struct{} // closed when the reading has ended
	err  error         // why it ended; written before done is closed
}

// newLine starts the read loop of stream; the caller must close the line.
func newLine(stream *transport.Stream, disp *dispatcher, log *slog.Logger) *line {
	ctx, cancel := context.WithCancel(context.Background())
	l := &line{
		stream:  stream,
		disp:    disp,
		log:     log,
		ctx:     ctx,
		cancel:  cancel,
		pending: make(map[string]*request),
		done:    make(chan struct{}),
	}
	l.watch = newReaderWatch(func() { go l.readLoop() }, stream.Flush)
	go l.readLoop()
	return l
}

// request is one of the device's requests on the line, waiting for the server's answer.
//
// The read loop hands the answer over on answer and then waits for handled, so that whatever the
// owner does with the answer (marking the session registered) happens before the loop reads the
// next message: a server may call a tool right after accepting the registration, and that call
// must already see the registered state. An owner that stops waiting closes abandoned instead.
type request struct {
	id        string
	answer    chan *transport.Message // unbuffered: a send is the owner's receive
	handled   chan struct{}
	abandoned chan struct{}
	finished  bool // the owner has closed handled or abandoned; owner-only
}

// finish releases the read loop from a request the owner got the answer of (or gave up on).
// Called by the owner, once it is done with the request, on every path.
func (r *request) finish(got bool) {
	if r == nil || r.finished {
		return
	}
	r.finished = true
	if got {
		close(r.handled)
	} else {
		close(r.abandoned)
	}
}

// call sends one of the device's requests and returns what to wait on for its answer.
func (l *line) call(id, method string, params any) (*request, error) {
	raw, err := json.Marshal(id)
	if err != nil {
		return nil, err
	}
	r := &request{id: string(raw), answer: make(chan *transport.Message), handled: make(chan struct{}), abandoned: make(chan struct{})}
	l.mu.Lock()
	l.pending[r.id] = r
	l.mu.Unlock()
	if err := l.stream.WriteRequest(raw, method, params); err != nil {
		l.forget(r)
		return nil, err
	}
	return r, nil
}

// forget drops r from the requests the loop can answer; the owner calls it when it stops waiting.
func (l *line) forget(r *request) {
	if r == nil {
		return
	}
	l.mu.Lock()
	delete(l.pending, r.id)
	l.mu.Unlock()
	r.finish(false)
}

// close closes the line with status 1000 (a no-op when the line is already gone), waits for the
// read loop to return and cancels the calls still running on it.
func (l *line) close() {
	if err := l.stream.Close(); err != nil {
		l.log.Debug("closing the line", "err", err)
	}
	<-l.done
}

// lost reports why the read loop ended: the line is gone.
func (l *line) lost() error {
	<-l.done
	return l.err
}

// readLoop reads the line until it is lost, or until the watch has handed the reading to another
// goroutine while this one ran a call: then it serves as a worker instead.
func (l *line) readLoop() {
	for {
		m, err := l.stream.Read()
		if err != nil {
			// The stream's own cause says why (no pong, a stuck write, the peer's close); the read
			// error is often only the closed socket that the teardown left behind.
			if cause := l.stream.Err(); cause != nil {
				err = cause
			}
			l.err = err
			l.watch.stop()
			l.cancel()
			close(l.done)
			return
		}
		var r handled
		l.handle(m, &r)
		if r.handedOver {
			l.disp.work(r.next)
			return
		}
		if r.next != nil {
			l.disp.launch([]*call{r.next})
		}
	}
}

// handled is what handling a message left the reader to do.
type handled struct {
	handedOver bool  // the reader ran a call long enough that another goroutine reads now
	next       *call // a call the end of the reader's call started, for a worker
}

// handle deals with one message; it waits for no tool that takes long.
func (l *line) handle(m *transport.Message, r *handled) {
	set := l.disp.settings.Load()
	defer func() {
		if p := recover(); p != nil {
			set.log.Error("panic handling message", "method", m.Method, "panic", p, "stack", string(debug.Stack()))
			if m.Kind == transport.KindRequest {
				l.replyError(m.ID, protocol.CodeInternalError, "Internal error", "")
			}
		}
	}()
	switch m.Kind {
	case transport.KindRequest:
		if m.Method != protocol.MethodExecute {
			l.replyError(m.ID, protocol.CodeMethodNotFound, "Method not found", fmt.Sprintf("method %q is not served by this device", m.Method))
			return
		}
		l.execute(set, m, r)
	case transport.KindNotification:
		l.notification(set, m)
	case transport.KindResponse:
		l.response(m)
	}
}

func (l *line) execute(set *dispatchSettings, m *transport.Message, r *handled) {
	p, err := parseExecute(m.Params)
	if err != nil {
		l.replyError(m.ID, protocol.CodeInvalidParams, "Invalid params", err.Error())
		return
	}
	own, refused := l.disp.accept(l.ctx, set, p.ToolName, p.ToolInput, ViaServer, lineReply{l, m.ID}, true)
	if refused != nil {
		l.replyError(m.ID, refused.Code, refused.Message, refused.Details)
		return
	}
	if own == nil {
		return
	}
	if own.tool.Inline {
		// An instant tool: it returns before any watch could matter.
		r.next = l.disp.run(own)
		return
	}
	n := l.watch.start()
	defer func() {
		// Deferred, so that a panic cannot leave the watch believing this goroutine reads.
		r.handedOver = !l.watch.finish(n)
	}()
	r.next = l.disp.run(own)
}

func parseExecute(raw json.RawMessage) (protocol.ExecuteParams, error) {
	var p protocol.ExecuteParams
	if len(raw) == 0 || string(raw) == "null" {
		return p, errors.New("params are required: {\"tool_name\":...,\"tool_input\":{...}}")
	}
	if quickExecute(raw, &p) {
		return p, nil
	}
	p = protocol.ExecuteParams{}
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, fmt.Errorf("params must be an object with tool_name (string) and tool_input (object): %w", err)
	}
	if p.ToolName == "" {
		return p, errors.New("tool_name is required")
	}
	return p, nil
}

// quickExecute reads the params of an execute the way json.Unmarshal into
// protocol.ExecuteParams does, for the params every server sends: an object whose tool_name is a
// plain string and whose member names are exactly the fields'. Anything else (an escape or bad
// UTF-8 in the name, a name that only matches a field ignoring case, a tool_name that is not a
// string) returns false, for json.Unmarshal to read or to word the error. tool_input aliases
// raw, as a Message's own copy.
func quickExecute(raw json.RawMessage, p *protocol.ExecuteParams) bool {
	if raw[0] != '{' {
		return false
	}
	for name, v := range transport.Members(raw) {
		switch string(name) {
		case "tool_name":
			if len(v) < 2 || v[0] != '"' || bytes.IndexByte(v, '\\') >= 0 || !utf8.Valid(v) {
				return false
			}
			p.ToolName = string(v[1 : len(v)-1])
		case "tool_input":
			p.ToolInput = v
		default:
			if bytes.EqualFold(name, []byte("tool_name")) || bytes.EqualFold(name, []byte("tool_input")) {
				return false
			}
		}
	}
	return p.ToolName != ""
}

func (l *line) notification(set *dispatchSettings, m *transport.Message) {
	if m.Method != protocol.MethodAIMessage {
		set.log.Debug("ignoring notification", "method", m.Method)
		return
	}
	var msg protocol.AIMessage
	if len(m.Params) == 0 || json.Unmarshal(m.Params, &msg) != nil {
		set.log.Debug("ignoring ai message with unreadable params")
		return
	}
	set.render(msg)
}

// response hands the answer to one of the device's requests to its owner, and waits until the
// owner has dealt with it (see request).
func (l *line) response(m *transport.Message) {
	l.mu.Lock()
	r := l.pending[string(m.ID)]
	delete(l.pending, string(m.ID))
	l.mu.Unlock()
	if r == nil {
		l.log.Debug("ignoring a response to no request of the device", "id", string(m.ID))
		return
	}
	select {
	case r.answer <- m:
		<-r.handled
	case <-r.abandoned:
	}
}

// replyError answers the request of id with an error.
func (l *line) replyError(id json.RawMessage, code int64, message, details string) {
	var data any
	if details != "" {
		data = protocol.ErrorData{Details: details}
	}
	if err := l.stream.WriteError(id, code, message, data); err != nil {
		l.log.Debug("cannot send error response", "code", code, "err", err)
	}
}

// lineReply answers a request of the server on the line, echoing its id byte for byte.
type lineReply struct {
	l  *line
	id json.RawMessage
}

// result and fail mark the line as having served before they write: the call was served even if
// the line fails under the answer, and a test that closes the line on reading the answer finds
// the mark already made.
func (r lineReply) result(_ context.Context, v any) error {
	r.l.answered.Store(true)
	err := r.l.stream.WriteResult(r.id, v)
	if err == nil {
		return nil
	}
	select {
	case <-r.l.stream.Done():
		return errNotSent
	default:
		return err // v did not marshal
	}
}

func (r lineReply) fail(code int64, message, details string) {
	r.l.answered.Store(true)
	r.l.replyError(r.id, code, message, details)
}
