package opentoolhttp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/devicectl/devicectl/protocol"
)

// internalErrorAnswer is the answer when no other can be encoded: protocol.CodeInternalError,
// spelled out (a test holds it to the constant).
const internalErrorAnswer = `{"jsonrpc":"2.0","result":{},"error":{"code":-32603,"message":"Internal error"},"id":null}` + "\n"

// DefaultMaxBody is the largest /call request body a handler reads when
// HandlerOptions.MaxBody is 0.
const DefaultMaxBody = 1 << 20

// DefaultVersion is what /opentool/version reports when
// HandlerOptions.Version is empty: the version of the protocol this package
// implements.
const DefaultVersion = "1.0.0"

// HandlerOptions configures NewHandler. A nil *HandlerOptions means all
// defaults: no document, no tools, no authentication. NewHandler copies the
// options; it never changes the caller's struct.
type HandlerOptions struct {
	// Version is reported by GET /opentool/version; empty means
	// DefaultVersion.
	Version string
	// Load returns the OpenTool document for GET /opentool/load. It is
	// called for every request, because the device's tools can change
	// while it runs. Nil, or a nil, empty or JSON null document, is answered
	// with {} ("no document", as the protocol says). A document that is not
	// a JSON object, or an error, is answered with HTTP 500.
	Load func(ctx context.Context) (json.RawMessage, error)
	// Call runs the function name with params, a JSON object (an absent or
	// null "params" arrives as {}). ctx is the request's: it ends when the
	// client goes away. The result is encoded as the answer's "result"; the
	// SDK clients expect a JSON object there, and a nil result is sent as
	// {}. An error that is, or wraps, an *RPCError is answered with its
	// code, message and data; any other error with protocol.CodeServerError and
	// err.Error(), which the agent shows to people: keep it short. A panic
	// is answered with protocol.CodeInternalError and logged with its stack.
	//
	// When the error's data is an object with a string "details" member,
	// the details are also appended to the message ("Invalid params:
	// level: 300 is greater than the maximum 100"): the TypeScript SDK's
	// client keeps only the message.
	//
	// Calls are not limited here: the caller bounds its own work in flight.
	// A nil Call answers every method with protocol.CodeMethodNotFound.
	Call func(ctx context.Context, name string, params json.RawMessage) (result any, err error)
	// APIKeys, when not empty, are the keys a client may send as
	// "Authorization: Bearer KEY"; every endpoint then requires one. A key
	// must not be empty nor hold spaces or control characters. Keys are
	// kept only as SHA-256 digests and never logged.
	APIKeys []string
	// Logger receives the handler's logs; nil discards them.
	Logger *slog.Logger
	// MaxBody is the largest /call request body, in bytes; 0 means
	// DefaultMaxBody. A larger body is answered with HTTP 413.
	MaxBody int64
	// AllowedHosts are the names the server is reached by, as a Host
	// header carries them: "host:port", or "host" for any port (IPv6 in
	// brackets). When not empty, a request whose Host is none of them is
	// answered 421, which defeats DNS rebinding: a web page whose name
	// was made to point at this machine still sends its own name. Empty,
	// with AnyIPHost false, means any Host. Names compare without regard
	// to case. An Origin, when a request has one, must be the request's
	// own Host or one of these (403 otherwise).
	AllowedHosts []string
	// AnyIPHost also accepts a Host that is an IP address, on any port:
	// a server listening on all addresses is reached by each of the
	// machine's addresses, and DNS rebinding needs a name.
	AnyIPHost bool
	// KeepRefs serves the document of Load as it is. By default every
	// {"$ref":"#/schemas/NAME"} in it is replaced by the schema it names,
	// because the TypeScript SDK's client resolves a reference only
	// against schemas it loaded earlier, and fails on the rest (its own
	// server inlines them too). A schema that refers to itself is cut at
	// the second visit: the reference becomes the schema's type, its
	// description saying where the shape continues.
	KeepRefs bool
}

// handler serves the three endpoints. It is immutable after NewHandler, so
// it needs no lock.
type handler struct {
	version string
	load    func(ctx context.Context) (json.RawMessage, error)
	call    func(ctx context.Context, name string, params json.RawMessage) (any, error)
	keys    [][sha256.Size]byte
	log     *slog.Logger
	maxBody int64
	hosts   []hostPort // empty, with anyIP false: any Host
	anyIP   bool       // any IP address as Host too
	inline  bool       // replace $refs in the document
}

// NewHandler returns the server side of the protocol: an http.Handler for
// GET /opentool/version, GET /opentool/load and POST /opentool/call. It
// matches the full paths, so mount it at "/" or at "/opentool/" of a mux.
// It fails only on invalid options.
func NewHandler(opts *HandlerOptions) (http.Handler, error) {
	var o HandlerOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxBody < 0 {
		return nil, fmt.Errorf("opentoolhttp: MaxBody must not be negative, got %d", o.MaxBody)
	}
	h := &handler{
		version: o.Version,
		load:    o.Load,
		call:    o.Call,
		log:     o.Logger,
		maxBody: o.MaxBody,
		inline:  !o.KeepRefs,
		anyIP:   o.AnyIPHost,
	}
	for i, a := range o.AllowedHosts {
		hp, err := parseHostPort(a, "")
		if err != nil {
			return nil, fmt.Errorf("opentoolhttp: AllowedHosts[%d]: %w", i, err)
		}
		h.hosts = append(h.hosts, hp)
	}
	if h.version == "" {
		h.version = DefaultVersion
	}
	if h.maxBody == 0 {
		h.maxBody = DefaultMaxBody
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	h.log = h.log.With("component", "opentoolhttp")
	for i, key := range o.APIKeys {
		// The error names the key by index: the key itself must not reach a log.
		if key == "" {
			return nil, fmt.Errorf("opentoolhttp: APIKeys[%d] is empty", i)
		}
		if strings.ContainsFunc(key, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
			return nil, fmt.Errorf("opentoolhttp: APIKeys[%d] holds a space or control character, which no Authorization header can carry", i)
		}
		h.keys = append(h.keys, sha256.Sum256([]byte(key)))
	}
	return h, nil
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store") // the document and results change at run time
	// Web pages first: a browser sends any page's requests to a port on
	// this machine, keys or not. The log messages are constant, with the
	// details as attributes, so that a flood of them can be counted as
	// repeats of one line.
	if status, reason := h.checkOrigin(r); status != 0 {
		h.log.Warn("refused request", "status", status, "path", r.URL.Path, "remote", r.RemoteAddr, "reason", reason)
		h.writeHTTPError(w, status, reason)
		return
	}
	// Authentication comes before routing, so that without a key nobody
	// learns which paths or methods exist.
	if len(h.keys) > 0 {
		if reason := h.checkKey(r); reason != "" {
			h.log.Warn("unauthorized request", "path", r.URL.Path, "remote", r.RemoteAddr, "reason", reason)
			w.Header().Set("WWW-Authenticate", `Bearer realm="opentool"`)
			h.writeHTTPError(w, http.StatusUnauthorized, "unauthorized: send a valid API key as Authorization: Bearer KEY")
			return
		}
	}
	switch r.URL.Path {
	case Prefix + "/version":
		if h.allow(w, r, http.MethodGet) {
			h.writeJSON(w, http.StatusOK, struct {
				Version string `json:"version"`
			}{h.version})
		}
	case Prefix + "/load":
		if h.allow(w, r, http.MethodGet) {
			h.serveLoad(w, r)
		}
	case Prefix + "/call":
		if h.allow(w, r, http.MethodPost) && h.allowJSON(w, r) {
			h.serveCall(w, r)
		}
	default:
		h.log.Debug("unknown path", "path", r.URL.Path, "remote", r.RemoteAddr)
		h.writeHTTPError(w, http.StatusNotFound, "not found: the endpoints are "+Prefix+"/version, "+Prefix+"/load and "+Prefix+"/call")
	}
}

// checkKey returns why r carries no valid key, or "" when it does. It
// compares digests, so the time taken says nothing about how much of a
// guess matched nor how long the keys are, and it compares with every key
// so that it says nothing about which one matched either.
func (h *handler) checkKey(r *http.Request) string {
	auth := r.Header.Get("Authorization")
	if auth == "" {
		return "no Authorization header"
	}
	scheme, token, ok := strings.Cut(auth, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "Authorization is not a Bearer token"
	}
	token = strings.TrimSpace(token)
	if token == "" {
		return "empty Bearer token"
	}
	sum := sha256.Sum256([]byte(token))
	match := 0
	for i := range h.keys {
		match |= subtle.ConstantTimeCompare(sum[:], h.keys[i][:])
	}
	if match != 1 {
		return "unknown API key"
	}
	return ""
}

// checkOrigin refuses what a web page, and not an OpenTool client, would
// send: a Host that is not a name of this server (421: DNS rebinding), or
// an Origin other than this server (403: a cross-site request). It returns
// the status to answer with and why, or 0 when r may go on. A request
// without Origin is not a browser's cross-site one: browsers send Origin
// with every POST, and SDK clients send none.
func (h *handler) checkOrigin(r *http.Request) (int, string) {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	host, err := parseHostPort(r.Host, defaultPort(scheme))
	if (len(h.hosts) > 0 || h.anyIP) && (err != nil || !host.in(h.hosts) && !(h.anyIP && net.ParseIP(host.host) != nil)) {
		return http.StatusMisdirectedRequest, fmt.Sprintf("misdirected request: this server does not answer to Host %q", oneLine(r.Host, 100))
	}
	origin := r.Header.Values("Origin")
	if len(origin) == 0 {
		return 0, ""
	}
	foreign := fmt.Sprintf("forbidden: requests from web pages at %q are refused", oneLine(origin[0], 100))
	if len(origin) > 1 {
		return http.StatusForbidden, foreign
	}
	// "null" (a sandboxed frame, a file:// page) fails to parse: refused.
	u, perr := url.Parse(origin[0])
	if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Path != "" || u.User != nil {
		return http.StatusForbidden, foreign
	}
	from, perr := parseHostPort(u.Host, defaultPort(u.Scheme))
	if perr != nil {
		return http.StatusForbidden, foreign
	}
	// The same origin as the Host, which passed the check above, or a
	// page under another of the server's names.
	if (err == nil && from == host) || from.in(h.hosts) {
		return 0, ""
	}
	return http.StatusForbidden, foreign
}

// allowJSON answers 415 and reports false unless r's body is declared
// application/json (charset, if given, UTF-8). A web page can send a
// text/plain or form POST to any address without the browser asking
// first; application/json it cannot.
func (h *handler) allowJSON(w http.ResponseWriter, r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	ok := err == nil && mt == "application/json"
	for k, v := range params {
		ok = ok && k == "charset" && strings.EqualFold(v, "utf-8")
	}
	if ok && len(r.Header.Values("Content-Type")) == 1 {
		return true
	}
	h.log.Debug("call without Content-Type: application/json", "remote", r.RemoteAddr, "content_type", oneLine(ct, 100))
	h.writeHTTPError(w, http.StatusUnsupportedMediaType, "unsupported media type: send the call as Content-Type: application/json")
	return false
}

// allow answers 405 and reports false unless r uses method.
func (h *handler) allow(w http.ResponseWriter, r *http.Request, method string) bool {
	if r.Method == method {
		return true
	}
	w.Header().Set("Allow", method)
	h.writeHTTPError(w, http.StatusMethodNotAllowed, "method not allowed: use "+method)
	return false
}

func (h *handler) serveLoad(w http.ResponseWriter, r *http.Request) {
	var doc json.RawMessage
	if h.load != nil {
		var err error
		doc, err = h.load(r.Context())
		if err != nil {
			h.log.Error("loading the OpenTool document failed", "err", err)
			h.writeHTTPError(w, http.StatusInternalServerError, "loading the OpenTool document failed: "+err.Error())
			return
		}
	}
	doc = bytes.TrimSpace(doc)
	switch {
	case len(doc) == 0 || string(doc) == "null":
		doc = emptyObject
	case !json.Valid(doc) || kindOf(doc) != kindObject:
		// A bad document is the device's bug; the agent gets a clear
		// failure rather than something its SDK cannot parse.
		h.log.Error("the OpenTool document is not a JSON object", "bytes", len(doc))
		h.writeHTTPError(w, http.StatusInternalServerError, "the device's OpenTool document is not a JSON object")
		return
	}
	if h.inline {
		if inlined, err := inlineRefs(doc); err != nil {
			// Still a valid document; only clients that resolve
			// references themselves can use it.
			h.log.Warn("the OpenTool document is served with its $refs", "err", err)
		} else {
			doc = inlined
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(validUTF8(doc))
	w.Write([]byte("\n"))
}

func (h *handler) serveCall(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	if r.ContentLength > h.maxBody {
		h.writeTooLarge(w, r)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			h.writeTooLarge(w, r)
			return
		}
		// The client most likely went away mid-body; answer in case it did not.
		h.log.Debug("reading a call failed", "remote", r.RemoteAddr, "err", err)
		h.writeResponse(w, http.StatusBadRequest, &response{
			JSONRPC: version20,
			Result:  emptyObject,
			Error:   &RPCError{Code: protocol.CodeParseError, Message: "Parse error: the request body could not be read"},
		})
		return
	}

	req, rpcErr := parseRequest(body)
	var result json.RawMessage
	if rpcErr == nil {
		result, rpcErr = h.invoke(r.Context(), req.method, req.params)
	}
	resp := &response{JSONRPC: req.version, Result: result, Error: rpcErr, ID: req.id}
	if rpcErr != nil {
		resp.Result = emptyObject
	}
	h.writeResponse(w, http.StatusOK, resp)
	if rpcErr != nil {
		h.log.Debug("call failed", "method", req.method, "id", req.id, "code", rpcErr.Code, "message", rpcErr.Message, "duration", time.Since(start))
	} else {
		h.log.Debug("call", "method", req.method, "id", req.id, "duration", time.Since(start))
	}
}

func (h *handler) writeTooLarge(w http.ResponseWriter, r *http.Request) {
	h.log.Warn("call body too large", "remote", r.RemoteAddr, "limit", h.maxBody)
	h.writeResponse(w, http.StatusRequestEntityTooLarge, &response{
		JSONRPC: version20,
		Result:  emptyObject,
		Error:   &RPCError{Code: protocol.CodeInvalidRequest, Message: fmt.Sprintf("Invalid Request: the body is larger than %d bytes", h.maxBody)},
	})
}

// invoke runs Call and turns what it returns into a result or an error
// object.
func (h *handler) invoke(ctx context.Context, name string, params json.RawMessage) (result json.RawMessage, rpcErr *RPCError) {
	if h.call == nil {
		return nil, &RPCError{Code: protocol.CodeMethodNotFound, Message: "Method not found: " + name}
	}
	defer func() {
		if p := recover(); p != nil {
			if err, ok := p.(error); ok && errors.Is(err, http.ErrAbortHandler) {
				panic(p) // net/http's way to abort a response; not ours to catch
			}
			// One tool's bug must not cut the agent's connection without
			// an answer; the stack keeps the bug visible.
			h.log.Error("call panicked", "method", name, "panic", p, "stack", string(debug.Stack()))
			result, rpcErr = nil, &RPCError{Code: protocol.CodeInternalError, Message: "Internal error: the device failed while running " + name}
		}
	}()
	v, err := h.call(ctx, name, params)
	if err != nil {
		var e *RPCError
		if errors.As(err, &e) && e != nil {
			c := *e
			c.Message = withDetails(c.Message, c.Data)
			return nil, &c
		}
		return nil, &RPCError{Code: protocol.CodeServerError, Message: err.Error()}
	}
	raw, err := encodeJSON(v)
	if err != nil {
		h.log.Error("call result is not JSON", "method", name, "err", err)
		return nil, &RPCError{Code: protocol.CodeInternalError, Message: "Internal error: the result of " + name + " could not be encoded as JSON"}
	}
	raw = bytes.TrimSpace(raw)
	if string(raw) == "null" {
		raw = emptyObject
	}
	return raw, nil
}

// writeResponse writes resp. Data that cannot be encoded is dropped rather
// than losing the whole answer.
func (h *handler) writeResponse(w http.ResponseWriter, status int, resp *response) {
	b, err := encodeJSON(resp)
	if err != nil && resp.Error != nil && resp.Error.Data != nil {
		h.log.Error("error data is not JSON; sending the error without it", "code", resp.Error.Code, "err", err)
		e := *resp.Error
		e.Data = nil
		r := *resp
		r.Error = &e
		b, err = encodeJSON(&r)
	}
	if err != nil {
		// Only an id or result that is not JSON could get here, and both
		// were checked; still, the client must get an answer.
		h.log.Error("encoding a call answer failed", "err", err)
		b = []byte(internalErrorAnswer)
	}
	b = validUTF8(b)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

func (h *handler) writeHTTPError(w http.ResponseWriter, status int, message string) {
	h.writeJSON(w, status, httpError{Code: status, Message: message})
}

func (h *handler) writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := encodeJSON(v)
	if err != nil { // only our own fixed shapes get here
		h.log.Error("encoding an answer failed", "err", err)
		status, b = http.StatusInternalServerError, []byte(`{"code":500,"message":"internal error"}`+"\n")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// request is a /call request that passed parseRequest, or as much of one as
// was read before it failed: version and id are what the answer carries.
type request struct {
	version string
	method  string
	params  json.RawMessage
	id      json.RawMessage // nil: JSON null
}

// parseRequest checks body against the rules of a /call request. On failure
// the request still holds the version and id to answer with: the id is
// checked first, so that an Invalid Request answer can carry it and the
// client can tell which call failed.
func parseRequest(body []byte) (request, *RPCError) {
	req := request{version: version20}
	if !json.Valid(body) {
		return req, &RPCError{Code: protocol.CodeParseError, Message: "Parse error: the body is not valid JSON"}
	}
	// JSON text must be UTF-8 (RFC 8259), and encoding/json does not check:
	// an id echoed as sent would make the answer invalid too, and a tool
	// would get params it cannot print.
	if !utf8.Valid(body) {
		return req, &RPCError{Code: protocol.CodeParseError, Message: "Parse error: the body is not valid UTF-8"}
	}
	switch k := kindOf(body); k {
	case kindObject:
	case kindArray:
		return req, invalid("batch requests are not supported; send one request object per POST")
	default:
		return req, invalid("the request must be a JSON object, not " + k.String())
	}
	// A map, not a struct: encoding/json matches struct fields without
	// regard to case, and "Method" is not "method".
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return req, &RPCError{Code: protocol.CodeParseError, Message: "Parse error: " + err.Error()}
	}

	// The seed makes the id required, and JSON-RPC would call a request
	// without one a notification and send nothing back. Over HTTP every
	// request gets an answer anyway, and an empty one is what the SDK
	// clients report as "Response is null"; so a missing id is answered
	// like a null one, and the call still runs.
	if raw, ok := fields["id"]; ok {
		switch k := kindOf(raw); k {
		case kindString, kindNumber:
			req.id = raw // echoed as sent: the client matches on it
		case kindNull:
		default:
			return req, invalid("id must be a string or a number, not " + k.String())
		}
	}

	raw, ok := fields["jsonrpc"]
	if !ok {
		return req, invalid(`"jsonrpc" is missing; it must be "2.0"`)
	}
	var v string
	if json.Unmarshal(raw, &v) != nil || (v != version20 && v != version200) {
		return req, invalid(`"jsonrpc" must be "2.0" (or "2.0.0"), not ` + oneLine(string(raw), 40))
	}
	req.version = v

	raw, ok = fields["method"]
	if !ok {
		return req, invalid(`"method" is missing; it names the function to call`)
	}
	if kindOf(raw) != kindString {
		return req, invalid(`"method" must be a string, not ` + kindOf(raw).String())
	}
	if err := json.Unmarshal(raw, &req.method); err != nil {
		return req, invalid(`"method" is not a valid string`)
	}
	if req.method == "" {
		return req, invalid(`"method" must not be empty`)
	}

	req.params = emptyObject
	if raw, ok := fields["params"]; ok {
		switch k := kindOf(raw); k {
		case kindObject:
			req.params = raw
		case kindNull:
		default:
			return req, invalid(`"params" must be an object of named arguments, not ` + k.String())
		}
	}
	return req, nil
}

// validUTF8 replaces invalid UTF-8 with U+FFFD, as encoding/json does for
// Go strings but not for a json.RawMessage a Call or Load returns. In valid
// JSON such bytes can only be inside strings, so the JSON stays valid.
func validUTF8(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	return bytes.ToValidUTF8(b, []byte("\uFFFD"))
}

func invalid(why string) *RPCError {
	return &RPCError{Code: protocol.CodeInvalidRequest, Message: "Invalid Request: " + why}
}
