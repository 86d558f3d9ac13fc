package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"sync/atomic"
	"unicode/utf8"

	"github.com/sourcegraph/jsonrpc2"
)

// wireMessage mirrors jsonrpc2 v0.2.3's unexported message type, the value
// its read loop hands to ReadObject and its send path to WriteObject:
//
//	type anyMessage struct {
//		request  *Request
//		response *Response
//	}
//
// Decoding a frame into it with encoding/json costs jsonrpc2 three passes, a
// map and a re-encoding of the params (a third of a round trip's time on the
// development machine); encoding one costs a map and nested marshals. The
// classifier has already found every member, so ReadObject fills the struct
// from them (decodeFast) and WriteObject writes the JSON itself (encodeFast),
// both only after checking at run time that the type has exactly this layout
// (asWireMessage). With any other jsonrpc2 version everything goes through
// encoding/json. FuzzClassify and FuzzEncode hold both ways to the same
// result.
type wireMessage struct {
	request  *jsonrpc2.Request
	response *jsonrpc2.Response
}

// wireType caches the reflect.Type of *anyMessage once its layout is checked.
var wireType atomic.Value

// asWireMessage returns v as a *wireMessage when v points to jsonrpc2's
// message type and that type has wireMessage's layout; else nil.
func asWireMessage(v any) *wireMessage {
	t := reflect.TypeOf(v)
	if t == nil {
		return nil
	}
	if known, _ := wireType.Load().(reflect.Type); t != known {
		if !sameLayout(t) {
			return nil
		}
		wireType.Store(t)
	}
	return (*wireMessage)(reflect.ValueOf(v).UnsafePointer()) // nil for a nil pointer
}

func sameLayout(t reflect.Type) bool {
	if t == nil || t.Kind() != reflect.Pointer {
		return false
	}
	e, w := t.Elem(), reflect.TypeFor[wireMessage]()
	if e.Kind() != reflect.Struct || e.PkgPath() != "github.com/sourcegraph/jsonrpc2" || e.Name() != "anyMessage" ||
		e.NumField() != w.NumField() || e.Size() != w.Size() {
		return false
	}
	for i := range w.NumField() {
		f, g := e.Field(i), w.Field(i)
		if f.Name != g.Name || f.Type != g.Type || f.Offset != g.Offset {
			return false
		}
	}
	return true
}

// decodeFast fills m from a classified frame's members exactly as jsonrpc2's
// decoder would, except that params keep the bytes received instead of being
// decoded and encoded again (the same JSON value). It reports false, leaving
// m alone, for what only jsonrpc2's decoder does right: members it keeps
// (meta, extra fields) and error objects.
func decodeFast(m *wireMessage, kind frameKind, env *envelope) bool {
	if env.others {
		return false
	}
	switch kind {
	case frameRequest:
		req := &jsonrpc2.Request{Method: stringValue(env.method)}
		if env.params != nil {
			p := json.RawMessage(bytes.Clone(env.params))
			req.Params = &p
		}
		if env.id == nil {
			req.Notif = true
		} else {
			req.ID = idValue(env.id)
		}
		m.request, m.response = req, nil
		return true
	case frameResponse:
		if env.error != nil {
			return false
		}
		r := json.RawMessage(bytes.Clone(env.result))
		m.request, m.response = nil, &jsonrpc2.Response{ID: idValue(env.id), Result: &r}
		return true
	}
	return false
}

// stringValue decodes a raw JSON string token.
func stringValue(raw []byte) string {
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner)
	}
	return string(unescape(raw)) // escapes, or bytes encoding/json turns into U+FFFD
}

// idValue converts an id the classifier accepted: a string, or digits that
// fit int64.
func idValue(raw []byte) jsonrpc2.ID {
	if raw[0] == '"' {
		return jsonrpc2.ID{Str: stringValue(raw), IsString: true}
	}
	var n uint64
	for _, c := range raw {
		n = n*10 + uint64(c-'0')
	}
	return jsonrpc2.ID{Num: n}
}

// encodeFast writes m to buf as jsonrpc2 would marshal it, member order
// aside ("jsonrpc" first, as in PROTOCOL.md), without jsonrpc2's map and
// nested marshalling. It reports false, writing nothing, for what only
// jsonrpc2's encoder does right (meta, extra fields, a message that is not
// exactly one request or response). Raw params, results and data are
// compacted and thereby checked, as encoding/json does with a RawMessage.
func encodeFast(buf *bytes.Buffer, m *wireMessage) (bool, error) {
	switch {
	case m.request != nil && m.response == nil:
		r := m.request
		if r.Meta != nil || len(r.ExtraFields) > 0 {
			return false, nil
		}
		buf.WriteString(`{"jsonrpc":"2.0"`)
		if !r.Notif {
			buf.WriteString(`,"id":`)
			appendID(buf, r.ID)
		}
		buf.WriteString(`,"method":`)
		buf.Write(appendString(buf.AvailableBuffer(), r.Method))
		if r.Params != nil {
			buf.WriteString(`,"params":`)
			if err := json.Compact(buf, *r.Params); err != nil {
				return true, fmt.Errorf("params: %w", err)
			}
		}
	case m.response != nil && m.request == nil:
		r := m.response
		hasResult := r.Result != nil && len(*r.Result) > 0
		if r.Meta != nil || hasResult == (r.Error != nil) {
			return false, nil
		}
		buf.WriteString(`{"jsonrpc":"2.0","id":`)
		appendID(buf, r.ID)
		if hasResult {
			buf.WriteString(`,"result":`)
			if err := json.Compact(buf, *r.Result); err != nil {
				return true, fmt.Errorf("result: %w", err)
			}
		} else {
			buf.WriteString(`,"error":{"code":`)
			buf.Write(strconv.AppendInt(buf.AvailableBuffer(), r.Error.Code, 10))
			buf.WriteString(`,"message":`)
			buf.Write(appendString(buf.AvailableBuffer(), r.Error.Message))
			if r.Error.Data != nil {
				buf.WriteString(`,"data":`)
				if err := json.Compact(buf, *r.Error.Data); err != nil {
					return true, fmt.Errorf("error data: %w", err)
				}
			}
			buf.WriteByte('}')
		}
	default:
		return false, nil
	}
	buf.WriteByte('}')
	return true, nil
}

func appendID(buf *bytes.Buffer, id jsonrpc2.ID) {
	if id.IsString {
		buf.Write(appendString(buf.AvailableBuffer(), id.Str))
		return
	}
	buf.Write(strconv.AppendUint(buf.AvailableBuffer(), id.Num, 10))
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
// "jsonrpc" first as in PROTOCOL.md.

// appendResult writes a success response.
func appendResult(buf *bytes.Buffer, id json.RawMessage, result any) error {
	if err := appendHead(buf, id); err != nil {
		return err
	}
	buf.WriteString(`,"result":`)
	if err := appendValue(buf, result); err != nil {
		return fmt.Errorf("result: %w", err)
	}
	buf.WriteByte('}')
	return nil
}

// appendError writes an error response; data nil (or a nil json.RawMessage)
// means no "data" member.
func appendError(buf *bytes.Buffer, id json.RawMessage, code int64, message string, data any) error {
	if err := appendHead(buf, id); err != nil {
		return err
	}
	buf.WriteString(`,"error":{"code":`)
	buf.Write(strconv.AppendInt(buf.AvailableBuffer(), code, 10))
	buf.WriteString(`,"message":`)
	buf.Write(appendString(buf.AvailableBuffer(), message))
	if !absent(data) {
		buf.WriteString(`,"data":`)
		if err := appendValue(buf, data); err != nil {
			return fmt.Errorf("error data: %w", err)
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
		buf.WriteString(`,"params":`)
		if err := appendValue(buf, params); err != nil {
			return fmt.Errorf("params: %w", err)
		}
	}
	buf.WriteByte('}')
	return nil
}

// appendHead writes a response's opening up to its id; a nil id is null
// (the answer to a request whose id could not be read).
func appendHead(buf *bytes.Buffer, id json.RawMessage) error {
	if id == nil {
		buf.WriteString(`{"jsonrpc":"2.0","id":null`)
		return nil
	}
	if err := checkWriteID(id, true); err != nil {
		return err
	}
	buf.WriteString(`{"jsonrpc":"2.0","id":`)
	buf.Write(id)
	return nil
}

// errBadID is returned by the writers for an id that could not be echoed: it
// must be one JSON string (valid UTF-8, since frames are text) or number
// token, or null in a response.
var errBadID = errors.New("bad id")

func checkWriteID(id json.RawMessage, nullOK bool) error {
	if len(id) == 0 {
		return fmt.Errorf("%w: empty", errBadID)
	}
	switch c := id[0]; {
	case c == '"' && utf8.Valid(id), c == '-', c >= '0' && c <= '9', c == 'n' && nullOK:
		if json.Valid(id) {
			return nil
		}
	}
	return fmt.Errorf("%w: %s is not a JSON string or number", errBadID, clip(id))
}

// absent reports a params or data value that means "no member".
func absent(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case json.RawMessage:
		return v == nil
	case *json.RawMessage:
		return v == nil
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
