package netlimit

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/devicectl/devicectl/protocol"
)

// HandlerOptions configure Handler. Nil means no limits. A zero field is no limit.
type HandlerOptions struct {
	BodyTimeout  time.Duration // agent.limits.body_timeout
	WriteTimeout time.Duration // agent.limits.write_timeout
	RequestBytes int64         // agent.limits.request_bytes
	// LogEvery is how often at most each kind of refusal is logged again; 0 is DefaultLogEvery.
	LogEvery time.Duration
	Logger   *slog.Logger // nil: nothing is logged
}

// Handler wraps next with the request limits of the package doc. The options are copied.
func Handler(next http.Handler, opts *HandlerOptions) http.Handler {
	h := &handler{next: next}
	if opts != nil {
		h.o = *opts
	}
	if h.o.LogEvery <= 0 {
		h.o.LogEvery = DefaultLogEvery
	}
	if h.o.Logger == nil {
		h.o.Logger = slog.New(slog.DiscardHandler)
	}
	h.largeLog.every, h.lateLog.every, h.stallLog.every = h.o.LogEvery, h.o.LogEvery, h.o.LogEvery
	return h
}

type handler struct {
	next http.Handler
	o    HandlerOptions

	largeLog, lateLog, stallLog rateLog
}

// Why a request's body was refused: the limit it broke.
const (
	bodyOK int32 = iota
	bodyTooLarge
	bodyLate
)

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	lw := &writer{w: w, rc: http.NewResponseController(w), h: h, r: r}
	// From the start: net/http writes "100 Continue" when the handler first reads the body.
	lw.extend()
	if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
		if h.o.RequestBytes > 0 && r.ContentLength > h.o.RequestBytes {
			lw.refuse(bodyTooLarge)
			return
		}
		b := &body{ReadCloser: r.Body}
		if h.o.RequestBytes > 0 {
			// w itself, not lw: MaxBytesReader tells net/http to close the connection after.
			b.ReadCloser = http.MaxBytesReader(w, r.Body, h.o.RequestBytes)
		}
		if h.o.BodyTimeout > 0 {
			lw.rc.SetReadDeadline(time.Now().Add(h.o.BodyTimeout)) // not supported: no deadline to keep
		}
		r.Body, lw.body = b, b
	}
	h.next.ServeHTTP(lw, r)
	if lw.hijacked {
		return
	}
	if !lw.wroteHeader && lw.body != nil && lw.body.failed.Load() != bodyOK {
		lw.refuse(lw.body.failed.Load())
		return
	}
	// What the handler left buffered is written after it returns.
	lw.extend()
}

// closes reports whether an answer with code closes the connection: the client was refused, and
// keeping its socket open would let a refused client hold one.
func closes(code int) bool {
	switch code {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusRequestTimeout,
		http.StatusRequestEntityTooLarge, http.StatusTooManyRequests:
		return true
	}
	return false
}

// body is a request's body that notes why it failed. Its read deadline needs no lifting: net/http
// clears it when the body ends and its background read of the connection starts.
type body struct {
	io.ReadCloser
	failed atomic.Int32
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			b.failed.CompareAndSwap(bodyOK, bodyTooLarge)
		case errors.Is(err, os.ErrDeadlineExceeded):
			b.failed.CompareAndSwap(bodyOK, bodyLate)
		}
	}
	return n, err
}

// writer is the ResponseWriter handlers get: it moves the write deadline before each write and
// answers for a body that broke a limit.
type writer struct {
	w  http.ResponseWriter
	rc *http.ResponseController
	h  *handler
	r  *http.Request

	body        *body // nil: the request has none
	wroteHeader bool
	overruled   bool // the limit's answer was sent instead of the handler's
	hijacked    bool
}

var (
	_ http.Flusher  = (*writer)(nil)
	_ http.Hijacker = (*writer)(nil)
)

// extend moves the write deadline to WriteTimeout from now.
func (lw *writer) extend() {
	if lw.h.o.WriteTimeout > 0 {
		lw.rc.SetWriteDeadline(time.Now().Add(lw.h.o.WriteTimeout)) // not supported: no deadline to keep
	}
}

func (lw *writer) Header() http.Header { return lw.w.Header() }

func (lw *writer) Unwrap() http.ResponseWriter { return lw.w }

func (lw *writer) WriteHeader(code int) {
	if lw.overruled {
		return
	}
	if !lw.wroteHeader && code >= 200 {
		if lw.overrule() {
			return
		}
		lw.wroteHeader = true
	}
	if closes(code) {
		lw.w.Header().Set("Connection", "close")
	}
	lw.w.WriteHeader(code)
}

func (lw *writer) Write(p []byte) (int, error) {
	if lw.overruled {
		return len(p), nil
	}
	if !lw.wroteHeader {
		if lw.overrule() {
			return len(p), nil
		}
		lw.wroteHeader = true
	}
	lw.extend()
	n, err := lw.w.Write(p)
	if err != nil {
		lw.noteWriteError(err)
	}
	return n, err
}

func (lw *writer) Flush() { lw.FlushError() }

// FlushError is what http.ResponseController.Flush calls: the error says the client is gone.
func (lw *writer) FlushError() error {
	if lw.overruled {
		return nil
	}
	if !lw.wroteHeader && lw.overrule() {
		return nil
	}
	lw.extend()
	err := lw.rc.Flush()
	if err != nil {
		lw.noteWriteError(err)
	}
	return err
}

// Hijack hands the connection over (a WebSocket upgrade); net/http clears its deadlines.
func (lw *writer) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := lw.rc.Hijack()
	if err == nil {
		lw.hijacked = true
	}
	return c, rw, err
}

// overrule sends the limit's answer instead of the handler's when the body broke a limit.
func (lw *writer) overrule() bool {
	if lw.body == nil {
		return false
	}
	why := lw.body.failed.Load()
	if why == bodyOK {
		return false
	}
	lw.refuse(why)
	return true
}

// refuse answers the request with the limit it broke: 413 or 408, as JSON-RPC to a JSON request
// and as text to any other.
func (lw *writer) refuse(why int32) {
	lw.overruled, lw.wroteHeader = true, true
	code, msg, detail := http.StatusRequestEntityTooLarge, "Request body too large",
		fmt.Sprintf("the request body is over agent.limits.request_bytes (%d bytes)", lw.h.o.RequestBytes)
	log, logMsg := &lw.h.largeLog, "a request body over agent.limits.request_bytes was refused (413)"
	if why == bodyLate {
		code, msg, detail = http.StatusRequestTimeout, "Request body too slow",
			fmt.Sprintf("the request body did not arrive within agent.limits.body_timeout (%v)", lw.h.o.BodyTimeout)
		log, logMsg = &lw.h.lateLog, "a request body slower than agent.limits.body_timeout was refused (408)"
	}
	if n, ok := log.due(); ok {
		lw.h.o.Logger.Warn(logMsg, "path", lw.r.URL.Path, "remote", lw.r.RemoteAddr, "times", n)
	}
	hd := lw.w.Header()
	clear(hd) // what the handler meant for its own answer
	hd.Set("Connection", "close")
	hd.Set("X-Content-Type-Options", "nosniff")
	var b []byte
	if mt, _, _ := mime.ParseMediaType(lw.r.Header.Get("Content-Type")); mt == "application/json" {
		hd.Set("Content-Type", "application/json")
		b, _ = json.Marshal(rpcRefusal{JSONRPC: "2.0", Error: rpcError{Code: protocol.CodeInvalidRequest, Message: msg, Data: rpcDetails{Details: detail}}})
	} else {
		hd.Set("Content-Type", "text/plain; charset=utf-8")
		b = []byte(msg + ": " + detail)
	}
	lw.extend()
	lw.w.WriteHeader(code)
	lw.w.Write(append(b, '\n'))
}

// rpcRefusal is a JSON-RPC error response without an id: the request was never read.
type rpcRefusal struct {
	JSONRPC string   `json:"jsonrpc"`
	ID      any      `json:"id"`
	Error   rpcError `json:"error"`
}

type rpcError struct {
	Code    int        `json:"code"`
	Message string     `json:"message"`
	Data    rpcDetails `json:"data"`
}

type rpcDetails struct {
	Details string `json:"details"`
}

// noteWriteError logs a client that stopped reading until write_timeout dropped it.
func (lw *writer) noteWriteError(err error) {
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		return
	}
	if n, ok := lw.h.stallLog.due(); ok {
		lw.h.o.Logger.Warn("a client stopped reading its response for agent.limits.write_timeout: dropped",
			"path", lw.r.URL.Path, "remote", lw.r.RemoteAddr, "write_timeout", lw.h.o.WriteTimeout, "times", n)
	}
}
