package transport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// frameKind is what Read and ReadObject do with a frame.
type frameKind uint8

const (
	// frameRequest and frameResponse are handed to the reader: Read builds a
	// Message from the members; ReadObject, after forConn, lets jsonrpc2
	// decode the frame.
	frameRequest frameKind = iota + 1
	frameResponse
	// frameInvalid is answered with -32600 Invalid Request.
	frameInvalid
	// frameUnparsable is answered with -32700 Parse error.
	frameUnparsable
	// frameDrop is logged and skipped, never answered: an error response that
	// nobody can use (no id, a bad id, a malformed error). Answering an
	// error with an error is how two peers start an endless exchange, and
	// every answer this package sends is itself an error response.
	frameDrop
)

// verdict is the classifier's decision about one frame.
type verdict struct {
	kind frameKind
	// id is the raw id token to echo in an answer (a string or a number as
	// received); nil means null.
	id []byte
	// details says what is wrong, for data.details and the log.
	details string
	// env holds the members of a request or response, for Read.
	env envelope
}

// The members the classifier checks, by their exact names.
const (
	nameJSONRPC = "jsonrpc"
	nameMethod  = "method"
	nameID      = "id"
	nameParams  = "params"
	nameResult  = "result"
	nameError   = "error"
)

var topNames = [...]string{nameJSONRPC, nameMethod, nameID, nameParams, nameResult, nameError}

// envelope holds the raw values of the top-level members that decide what a
// message is. A nil field means the member is absent.
type envelope struct {
	jsonrpc, method, id, params, result, error []byte
}

func (e *envelope) slot(name []byte) *[]byte {
	switch string(name) { // no allocation: the compiler compares in place
	case nameJSONRPC:
		return &e.jsonrpc
	case nameMethod:
		return &e.method
	case nameID:
		return &e.id
	case nameParams:
		return &e.params
	case nameResult:
		return &e.result
	case nameError:
		return &e.error
	}
	return nil
}

// classify decides what to do with one text frame. It allocates nothing for a
// well-formed message.
//
// Beyond the JSON-RPC 2.0 rules it refuses what different decoders would
// read differently, so that Read, jsonrpc2 and the peer agree on a message:
//   - encoding/json matches member names case-insensitively for structs but
//     jsonrpc2 reads requests through a map, so "Method" or "ID" would be
//     read one way by one decoder and another way by the other: a name that
//     differs from a known one only in case is refused, as is a repeated one;
//   - an "error" member that is not an object with an integer code and a
//     string message would fail to decode.
//
// Ids follow checkID (any string or number); ReadObject narrows them further
// with forConn.
func classify(data []byte) verdict {
	if !json.Valid(data) {
		return verdict{kind: frameUnparsable, details: "the frame is not valid JSON"}
	}
	s := scanner{data: data}
	switch s.peek() {
	case '{':
	case '[':
		return invalid(nil, "batch requests are not supported: send one message per frame")
	default:
		return invalid(nil, "a message must be a JSON object, not "+kindOf(s.value()))
	}
	s.pos++

	var (
		env     envelope
		problem string
		dupID   bool
	)
	for {
		m, ok := s.next()
		if !ok {
			break
		}
		if p := env.slot(m.name); p != nil {
			if *p != nil {
				dupID = dupID || string(m.name) == nameID
				if problem == "" {
					problem = fmt.Sprintf("member %q appears more than once", m.name)
				}
			}
			*p = m.value
			continue
		}
		// Another member (e.g. "meta"): Read ignores it, jsonrpc2 keeps it.
		if problem == "" {
			problem = nearMiss(m.name, topNames[:])
		}
	}

	// Shaped like the answers this package sends: never answered.
	errorOnly := env.method == nil && env.error != nil && env.result == nil

	if problem == "" {
		problem = checkEnvelope(&env)
	}
	if problem != "" {
		if errorOnly {
			return verdict{kind: frameDrop, details: problem}
		}
		var echo []byte
		if !dupID {
			echo = echoID(env.id)
		}
		return invalid(echo, problem)
	}
	if env.method != nil {
		return verdict{kind: frameRequest, env: env}
	}
	if bytes.Equal(env.id, jsonNull) {
		// The peer could not tie its error to a request (e.g. it could not
		// parse one of ours): no pending call can use it. (jsonrpc2 would
		// even read the null id as 0 and fail an unrelated call with it.)
		return verdict{kind: frameDrop, details: "error response without an id: " + clip(env.error)}
	}
	return verdict{kind: frameResponse, env: env}
}

var jsonNull = []byte("null")

// checkEnvelope applies the JSON-RPC 2.0 rules to the top-level members and
// returns what is wrong, or "".
func checkEnvelope(env *envelope) string {
	switch {
	case env.jsonrpc == nil:
		return `missing member "jsonrpc": it must be "2.0"`
	case !isString(env.jsonrpc, "2.0"):
		return fmt.Sprintf(`"jsonrpc" must be "2.0", got %s`, clip(env.jsonrpc))
	}
	if env.method != nil { // a request or a notification
		switch {
		case env.method[0] != '"':
			return fmt.Sprintf(`"method" must be a string, got %s`, kindOf(env.method))
		case env.result != nil || env.error != nil:
			return `a request (it has "method") must not have "result" or "error"`
		case env.params != nil && env.params[0] != '{' && env.params[0] != '[':
			return fmt.Sprintf(`"params" must be an object or an array, got %s`, kindOf(env.params))
		case env.id != nil:
			return checkID(env.id, false)
		}
		return ""
	}
	switch { // a response
	case env.result != nil && env.error != nil:
		return `a response must have "result" or "error", not both`
	case env.result == nil && env.error == nil:
		return `the message has no "method" and no "result" or "error": it is neither a request nor a response`
	case env.id == nil:
		return `a response must have an "id"`
	}
	if env.error != nil {
		if p := checkError(env.error); p != "" {
			return p
		}
	}
	return checkID(env.id, env.error != nil)
}

// checkID reports what is wrong with a raw id: JSON-RPC 2.0 allows a string
// or a number, and the id is echoed byte for byte, so any number token will
// do (negative, fractional, with an exponent) and so will any string escape,
// a lone surrogate such as "\ud800" included. A string must be valid UTF-8:
// the echo goes back in a text frame, which must be UTF-8 (RFC 6455), and
// replacing the bad bytes would no longer be an echo. nullOK lets an error
// response say that it has no id.
func checkID(raw []byte, nullOK bool) string {
	switch c := raw[0]; {
	case c == '"':
		if !utf8.Valid(raw) {
			return `"id" is not valid UTF-8`
		}
		return ""
	case c == '-' || c >= '0' && c <= '9':
		return ""
	case c == 'n' && nullOK:
		return ""
	}
	return fmt.Sprintf(`"id" must be a string or a number, got %s`, kindOf(raw))
}

// forConn narrows a verdict for ReadObject, whose reader is a jsonrpc2.Conn:
// jsonrpc2 v0.2.3 keeps an id as a Go string or a uint64, so it would turn a
// negative id into a huge unsigned one, fail to decode a fraction or an
// exponent (and close the whole connection), and echo a lone surrogate as
// U+FFFD. Such a request or result is refused with -32600 instead, so a
// jsonrpc2 peer never silently answers under another id; such an error
// response is dropped, as classify drops every unusable one.
func forConn(v verdict) verdict {
	if v.kind != frameRequest && v.kind != frameResponse || v.env.id == nil {
		return v
	}
	p := checkConnID(v.env.id)
	switch {
	case p == "":
		return v
	case v.env.error != nil:
		return verdict{kind: frameDrop, details: p}
	}
	return invalid(echoID(v.env.id), p)
}

// checkConnID reports why jsonrpc2 could not echo an id that checkID
// accepted: only a string that holds text (no lone surrogate) and a
// non-negative integer that fits int64 come back from its ID type as the
// same value. (Not always as the same bytes: it re-encodes a string, so
// "\u00e9" comes back as "é".)
func checkConnID(raw []byte) string {
	switch c := raw[0]; {
	case c == '"':
		if loneSurrogate(raw) { // no Go string holds one
			return `"id" holds a lone UTF-16 surrogate escape, which cannot be echoed back`
		}
		return ""
	case c >= '0' && c <= '9':
		if !isDigits(raw) {
			return fmt.Sprintf(`"id" must be a string or a non-negative integer, got %s`, clip(raw))
		}
		if !fitsInt64(raw) {
			return fmt.Sprintf(`"id" must be a string or a non-negative integer up to %d, got %s`, int64(1<<63-1), clip(raw))
		}
		return ""
	case c == 'n':
		return `"id" must be a string or a non-negative integer, got null`
	}
	return fmt.Sprintf(`"id" must be a string or a non-negative integer, got %s`, clip(raw))
}

var errorNames = [...]string{"code", "message", "data"}

// checkError reports what is wrong with a response's raw "error" member, as
// far as decoding it into a jsonrpc2.Error is concerned.
func checkError(raw []byte) string {
	if raw[0] != '{' {
		return fmt.Sprintf(`"error" must be an object, got %s`, kindOf(raw))
	}
	s := scanner{data: raw, pos: 1}
	var code, message, data []byte
	for {
		m, ok := s.next()
		if !ok {
			break
		}
		var p *[]byte
		switch string(m.name) {
		case "code":
			p = &code
		case "message":
			p = &message
		case "data":
			p = &data
		default:
			if nm := nearMiss(m.name, errorNames[:]); nm != "" {
				return `in "error": ` + nm
			}
			continue
		}
		if *p != nil {
			return fmt.Sprintf(`in "error": member %q appears more than once`, m.name)
		}
		*p = m.value
	}
	if code != nil && !isInt64(code) {
		return fmt.Sprintf(`"error.code" must be an integer, got %s`, clip(code))
	}
	if message != nil && message[0] != '"' {
		return fmt.Sprintf(`"error.message" must be a string, got %s`, kindOf(message))
	}
	return ""
}

// nearMiss reports a member name that encoding/json would take for one of
// names (it folds case, Unicode included) although it is not spelled so.
func nearMiss(name []byte, names []string) string {
	for _, n := range names {
		if bytes.EqualFold(name, []byte(n)) {
			return fmt.Sprintf("member %q is not %q: member names are case-sensitive", name, n)
		}
	}
	return ""
}

// echoID returns the raw id to put in an answer: the id as received when it
// is a string or a number, else nil (null).
func echoID(raw []byte) []byte {
	if len(raw) == 0 {
		return nil
	}
	switch c := raw[0]; {
	case c == '"':
		if utf8.Valid(raw) {
			return raw
		}
	case c == '-' || c >= '0' && c <= '9':
		return raw
	}
	return nil
}

func invalid(id []byte, details string) verdict {
	return verdict{kind: frameInvalid, id: id, details: details}
}

// isString reports whether raw is a JSON string whose value is want.
func isString(raw []byte, want string) bool {
	if len(raw) == len(want)+2 && raw[0] == '"' && string(raw[1:len(raw)-1]) == want {
		return true
	}
	if raw[0] != '"' || bytes.IndexByte(raw, '\\') < 0 {
		return false
	}
	return string(unescape(raw)) == want
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

// fitsInt64 reports whether a string of decimal digits (no leading zeros: it
// comes from valid JSON) is at most math.MaxInt64.
func fitsInt64(digits []byte) bool {
	const maxInt64 = "9223372036854775807"
	if len(digits) != len(maxInt64) {
		return len(digits) < len(maxInt64)
	}
	return string(digits) <= maxInt64
}

// isInt64 reports whether a raw number is an integer that fits int64, the
// way encoding/json decodes it into an int64 (strconv.ParseInt).
func isInt64(raw []byte) bool {
	digits := raw
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if !isDigits(digits) {
		return false
	}
	_, err := strconv.ParseInt(string(raw), 10, 64)
	return err == nil
}

// clip returns a raw value for an error message, cut to a readable length.
func clip(raw []byte) string {
	const limit = 40
	if len(raw) <= limit {
		return string(raw)
	}
	return string(raw[:limit]) + "..."
}

// The fixed parts of appendAnswer's frames, with protocol.CodeParseError and
// protocol.CodeInvalidRequest spelled out (TestAnswerCodes holds them to it): written as
// constants, they cost the board binary nothing at run time.
const (
	parseErrorTail     = `,"error":{"code":-32700,"message":"Parse error"}}`
	invalidRequestHead = `,"error":{"code":-32600,"message":"Invalid Request","data":{"details":`
)

// appendAnswer appends the error response frame for v (frameInvalid or
// frameUnparsable). The member order is fixed so the frame is the same bytes
// every time: {"jsonrpc":"2.0","id":…,"error":{"code":…,"message":…,"data":{"details":…}}}.
// A parse error carries no data, exactly as docs/protocol.md shows it.
func appendAnswer(dst []byte, v verdict) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	if v.id == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, v.id...)
	}
	if v.kind == frameUnparsable {
		return append(dst, parseErrorTail...)
	}
	dst = append(dst, invalidRequestHead...)
	dst = appendString(dst, v.details)
	return append(dst, "}}}"...)
}

// loneSurrogate reports whether the raw JSON string holds a \uD800-\uDFFF escape that is not
// half of a high-low pair: valid JSON, but not text, so it cannot be decoded and sent back as
// the same string.
func loneSurrogate(raw []byte) bool {
	for i := 0; i+1 < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if raw[i+1] != 'u' {
			i++ // an escape of one character, such as \\ or \"
			continue
		}
		r, ok := hex4(raw, i+2)
		if !ok {
			return false // not a string the classifier accepted; not ours to judge
		}
		switch {
		case r >= 0xD800 && r <= 0xDBFF: // high: a low must follow
			lo, ok := -1, false
			if i+7 < len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u' {
				lo, ok = hex4(raw, i+8)
			}
			if !ok || lo < 0xDC00 || lo > 0xDFFF {
				return true
			}
			i += 11
		case r >= 0xDC00 && r <= 0xDFFF:
			return true
		default:
			i += 5
		}
	}
	return false
}

// hex4 decodes the four hex digits of a \u escape at raw[i:].
func hex4(raw []byte, i int) (int, bool) {
	if i+4 > len(raw) {
		return 0, false
	}
	n := 0
	for _, c := range raw[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			n = n*16 + int(c-'0')
		case c >= 'a' && c <= 'f':
			n = n*16 + int(c-'a'+10)
		case c >= 'A' && c <= 'F':
			n = n*16 + int(c-'A'+10)
		default:
			return 0, false
		}
	}
	return n, true
}
