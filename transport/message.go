package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/sourcegraph/jsonrpc2"
)

// Kind says what a Message is.
type Kind uint8

const (
	KindRequest      Kind = iota + 1 // has a method and an id
	KindNotification                 // has a method, no id
	KindResponse                     // has a result or an error, and an id
)

func (k Kind) String() string {
	switch k {
	case KindRequest:
		return "request"
	case KindNotification:
		return "notification"
	case KindResponse:
		return "response"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Message is one JSON-RPC 2.0 message read from the line, parsed once.
//
// ID, Params and Result are the bytes received, copied out of the Stream's
// read buffer: the caller may keep them.
type Message struct {
	Kind Kind
	// ID is the id exactly as received: a string token with its quotes, or
	// a number token (negative, fractional, exponent allowed); nil for a
	// notification. Write it back as is to answer.
	ID     json.RawMessage
	Method string
	Params json.RawMessage // nil when absent
	Result json.RawMessage // success responses: not nil (it may be the token null)
	Error  *jsonrpc2.Error // error responses
}

// message builds the Message of a frame that classify passed as a request or
// a response, from the members it found: nothing is decoded again. ID,
// params and result share one allocation, since the frame's buffer is reused.
func (s *Stream) message(kind frameKind, env *envelope) (*Message, error) {
	m := &Message{}
	n := len(env.id) + len(env.params) + len(env.result)
	var buf []byte
	if n > 0 {
		buf = make([]byte, 0, n)
	}
	m.ID, buf = take(buf, env.id)
	if kind == frameRequest {
		m.Kind = KindRequest
		if env.id == nil {
			m.Kind = KindNotification
		}
		m.Method = s.methodName(env.method)
		m.Params, _ = take(buf, env.params)
		return m, nil
	}
	m.Kind = KindResponse
	if env.error != nil {
		// Rare, and checkError has made sure it decodes; jsonrpc2.Error's
		// own field tags say how.
		m.Error = new(jsonrpc2.Error)
		if err := json.Unmarshal(env.error, m.Error); err != nil {
			return nil, fmt.Errorf("error member: %w", err)
		}
		return m, nil
	}
	m.Result, _ = take(buf, env.result)
	return m, nil
}

// take copies b to the end of buf, whose capacity has room for it, and
// returns the copy (capped, so appending to it cannot reach the next one)
// and buf. A nil b stays nil: an absent member.
func take(buf, b []byte) (json.RawMessage, []byte) {
	if b == nil {
		return nil, buf
	}
	start := len(buf)
	buf = append(buf, b...)
	return buf[start:len(buf):len(buf)], buf
}

// methodName decodes a raw method token. A line carries few distinct
// methods, mostly the same one in a row, so the last name is kept and reused
// rather than allocated again. Only Read's goroutine calls it.
func (s *Stream) methodName(raw []byte) string {
	inner := raw[1 : len(raw)-1]
	if string(inner) == s.lastMethod { // no allocation: compared in place
		return s.lastMethod
	}
	name := stringValue(raw)
	if name == string(inner) { // spelled without escapes: the next one can match in place
		s.lastMethod = name
	}
	return name
}

// The writers below build one frame each in buf. Member order is fixed,
// "jsonrpc" first as in docs/protocol.md.

// appendResult writes a success response, which needs a string or number id.
func appendResult(buf *bytes.Buffer, id json.RawMessage, result any) error {
	if err := appendHead(buf, id, false); err != nil {
		return err
	}
	buf.WriteString(`,"result":`)
	if err := appendValue(buf, result); err != nil {
		return fmt.Errorf("result: %w", err)
	}
	buf.WriteByte('}')
	return nil
}

// appendError writes an error response; data nil (or an empty
// json.RawMessage) means no "data" member.
func appendError(buf *bytes.Buffer, id json.RawMessage, code int64, message string, data any) error {
	if err := appendHead(buf, id, true); err != nil {
		return err
	}
	buf.WriteString(`,"error":{"code":`)
	buf.Write(strconv.AppendInt(buf.AvailableBuffer(), code, 10))
	buf.WriteString(`,"message":`)
	buf.Write(appendString(buf.AvailableBuffer(), message))
	if !absent(data) {
		member := buf.Len()
		buf.WriteString(`,"data":`)
		value := buf.Len()
		if err := appendValue(buf, data); err != nil {
			return fmt.Errorf("error data: %w", err)
		}
		if buf.Bytes()[value] == 'n' {
			// null data, e.g. a nil map: no member, as for nil, since a reader cannot tell
			// "data":null from no data.
			buf.Truncate(member)
		}
	}
	buf.WriteString("}}")
	return nil
}

// appendRequest writes a request, or a notification when id is nil.
func appendRequest(buf *bytes.Buffer, id json.RawMessage, method string, params any) error {
	buf.WriteString(`{"jsonrpc":"2.0"`)
	if id != nil {
		if err := checkWriteID(id, false); err != nil {
			return err
		}
		buf.WriteString(`,"id":`)
		buf.Write(id)
	}
	buf.WriteString(`,"method":`)
	buf.Write(appendString(buf.AvailableBuffer(), method))
	if !absent(params) {
		member := buf.Len()
		buf.WriteString(`,"params":`)
		value := buf.Len()
		if err := appendValue(buf, params); err != nil {
			return fmt.Errorf("params: %w", err)
		}
		switch buf.Bytes()[value] {
		case '{', '[':
		case 'n': // null, e.g. a nil map: no params, as for nil
			buf.Truncate(member)
		default: // the peer would refuse it (-32600)
			return fmt.Errorf("%w, got %s", errParams, kindOf(buf.Bytes()[value:]))
		}
	}
	buf.WriteByte('}')
	return nil
}

// errParams is returned by the writers for params that JSON-RPC 2.0 does not
// allow.
var errParams = errors.New("params must be an object or an array")

// appendHead writes a response's opening up to its id. A nil id (or null)
// is only for errors: the answer to a request whose id could not be read.
func appendHead(buf *bytes.Buffer, id json.RawMessage, isError bool) error {
	switch {
	case id == nil && isError:
		buf.WriteString(`{"jsonrpc":"2.0","id":null`)
		return nil
	case id == nil:
		return fmt.Errorf("%w: a result needs an id", errBadID)
	}
	if err := checkWriteID(id, isError); err != nil {
		return err
	}
	buf.WriteString(`{"jsonrpc":"2.0","id":`)
	buf.Write(id)
	return nil
}

// errBadID is returned by the writers for an id that could not be echoed: it
// must be one JSON string (valid UTF-8, since frames are text) or number
// token, or null in an error response.
var errBadID = errors.New("bad id")

func checkWriteID(id json.RawMessage, nullOK bool) error {
	if len(id) == 0 {
		return fmt.Errorf("%w: empty", errBadID)
	}
	// One token, nothing around it: the first and last bytes belong to it.
	switch c, last := id[0], id[len(id)-1]; {
	case c == '"' && last == '"' && utf8.Valid(id),
		(c == '-' || c >= '0' && c <= '9') && last >= '0' && last <= '9',
		c == 'n' && last == 'l' && nullOK:
		if json.Valid(id) {
			return nil
		}
	}
	return fmt.Errorf("%w: %s is not a JSON string or number", errBadID, clip(id))
}

// absent reports a params or data value that means "no member": nil, or an
// empty json.RawMessage (which has no JSON to write).
func absent(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case json.RawMessage:
		return len(v) == 0
	case *json.RawMessage:
		return v == nil || len(*v) == 0
	}
	return false
}

// appendValue writes v as JSON: a json.RawMessage compacted (which also
// checks it), anything else through encoding/json.
func appendValue(buf *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case json.RawMessage:
		return appendRaw(buf, v)
	case *json.RawMessage:
		if v != nil {
			return appendRaw(buf, *v)
		}
	}
	if err := json.NewEncoder(buf).Encode(v); err != nil {
		return err
	}
	buf.Truncate(buf.Len() - 1) // Encode ends with a newline
	return nil
}

// appendRaw writes raw compacted; an empty one is null, as encoding/json
// writes a nil json.RawMessage.
func appendRaw(buf *bytes.Buffer, raw json.RawMessage) error {
	if len(raw) == 0 {
		buf.WriteString("null")
		return nil
	}
	return json.Compact(buf, raw)
}

// stringValue decodes a raw JSON string token.
func stringValue(raw []byte) string {
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner)
	}
	return string(unescape(raw)) // escapes, or bytes encoding/json turns into U+FFFD
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string, byte for byte as json.Marshal
// writes it: HTML characters, U+2028 and U+2029 escaped, invalid UTF-8
// replaced by U+FFFD (FuzzAppendString checks).
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
