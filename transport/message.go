package transport

import (
	"bytes"
	"encoding/json"
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
