package opentoolhttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Where the protocol lives.
const (
	// DefaultPort is the port the public OpenTool SDKs listen on and dial.
	DefaultPort = 9627
	// Prefix is the path under which the three endpoints live.
	Prefix = "/opentool"
)

// JSON-RPC 2.0 error codes this package sends. Call may return any code in
// an *RPCError; these are the ones with a fixed meaning.
const (
	CodeParseError     = -32700 // the body is not JSON
	CodeInvalidRequest = -32600 // JSON, but not a request this server takes
	CodeMethodNotFound = -32601 // no such tool (HandlerOptions.Call is nil)
	CodeInvalidParams  = -32602 // for Call implementations that check params
	CodeInternalError  = -32603 // the handler failed: a panic, a result that is not JSON
	CodeServerError    = -32000 // Call returned an error that is not an *RPCError
)

// The "jsonrpc" values accepted in a request. The seed and the Dart SDK send
// "2.0"; the TypeScript SDK sends "2.0.0". An answer carries the value its
// request used, so each SDK sees what it sent.
const (
	version20  = "2.0"
	version200 = "2.0.0"
)

// RPCError is a JSON-RPC error object. A Call implementation returns one
// (possibly wrapped) to choose the code, message and data of its answer.
type RPCError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
	// Data, when not nil, is sent as the error's "data" member. If it cannot
	// be encoded as JSON the error is sent without it.
	Data any `json:"data,omitempty"`
}

func (e *RPCError) Error() string {
	if e == nil {
		return "<nil *RPCError>"
	}
	return fmt.Sprintf("%s (code %d)", e.Message, e.Code)
}

// response is the shape of every /call answer. The fields are in the seed's
// order, and "result" and "error" are always present: the SDK clients
// decode both members unconditionally.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	Result  json.RawMessage `json:"result"`
	Error   *RPCError       `json:"error"`
	ID      json.RawMessage `json:"id"`
}

// emptyObject is the result of a call that returned nothing, and of every
// error answer. The seed's error example carries "result": {}, and the Dart
// SDK client decodes "result" as a map before it looks at "error": a null
// there would turn a tool's error message into a type error on the agent.
var emptyObject = json.RawMessage(`{}`)

// httpError is the body of answers that are not JSON-RPC (401, 404, 405,
// 500 from /load): the {code, message} shape of the seed's exceptions.
type httpError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// encodeJSON encodes v without escaping <, > and &: the answers are
// application/json, never HTML, and an id must come back as the client sent
// it.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// kind is the JSON type of a valid, trimmed JSON value, from its first byte.
type kind byte

const (
	kindInvalid kind = iota
	kindNull
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

func kindOf(raw []byte) kind {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return kindInvalid
	}
	switch c := raw[0]; {
	case c == 'n':
		return kindNull
	case c == 't' || c == 'f':
		return kindBool
	case c == '"':
		return kindString
	case c == '[':
		return kindArray
	case c == '{':
		return kindObject
	case c == '-' || ('0' <= c && c <= '9'):
		return kindNumber
	}
	return kindInvalid
}

func (k kind) String() string {
	return [...]string{"nothing", "null", "a boolean", "a number", "a string", "an array", "an object"}[k]
}

// oneLine makes text from the other side safe for a one-line log entry:
// control and format characters (newlines, bidi overrides) become spaces,
// runs of space shrink to one, invalid UTF-8 becomes U+FFFD, and the result
// is at most limit bytes, cut on a rune boundary and ending in "…" when
// something was cut.
func oneLine(s string, limit int) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsControl(r) || unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
		if b.Len() > limit {
			break // enough to know it must be cut
		}
	}
	out := b.String()
	if len(out) <= limit {
		return out
	}
	end := max(limit-len("…"), 0)
	for end > 0 && !utf8.RuneStart(out[end]) {
		end--
	}
	return out[:end] + "…"
}

// hostPort is a host and port as Host and Origin name them: the host in
// lower case, without brackets; the port empty for "any port" (in
// AllowedHosts only).
type hostPort struct {
	host, port string
}

// parseHostPort reads "host:port", "[v6]:port", "host" or "[v6]"; a
// missing port is defPort.
func parseHostPort(s, defPort string) (hostPort, error) {
	if s == "" {
		return hostPort{}, errors.New("no host")
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		// No port: a name, an IPv4 address, or an IPv6 one in brackets.
		host, port = s, defPort
		if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
			host = s[1 : len(s)-1]
		} else if strings.Contains(s, ":") {
			return hostPort{}, fmt.Errorf("%q is not host or host:port", s)
		}
	} else if n, perr := strconv.Atoi(port); perr != nil || n < 0 || n > 65535 {
		return hostPort{}, fmt.Errorf("%q: the port is not a number 0..65535", s)
	}
	if host == "" || strings.ContainsAny(host, "/?#@[] ") {
		return hostPort{}, fmt.Errorf("%q is not host or host:port", s)
	}
	return hostPort{strings.ToLower(host), port}, nil
}

// in reports whether hp is one of allowed, where an allowed port that is
// empty matches any.
func (hp hostPort) in(allowed []hostPort) bool {
	for _, a := range allowed {
		if a.host == hp.host && (a.port == "" || a.port == hp.port) {
			return true
		}
	}
	return false
}

func defaultPort(scheme string) string {
	if scheme == "https" {
		return "443"
	}
	return "80"
}
