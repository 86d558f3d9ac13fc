package opentoolhttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
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

// refPrefix starts a reference to one of a document's shared schemas.
const refPrefix = "#/schemas/"

// maxInlined bounds the values inlineRefs may produce: shared schemas that
// refer to each other can grow exponentially when copied out.
const maxInlined = 1 << 18

// errTooLarge: inlining would pass maxInlined values.
var errTooLarge = errors.New("the document with its references inlined would be too large")

// jsonValue is a JSON value that keeps its members in the order they came
// in, so that a document with its references inlined still reads as the
// device wrote it.
type jsonValue struct {
	raw     json.RawMessage // a scalar, as sent
	members []jsonMember    // an object (non-nil, maybe empty, when isObj)
	items   []*jsonValue    // an array
	isObj   bool
	isArr   bool
}

type jsonMember struct {
	key string
	val *jsonValue
}

func (v *jsonValue) get(key string) *jsonValue {
	for _, m := range v.members {
		if m.key == key {
			return m.val
		}
	}
	return nil
}

func decodeValue(dec *json.Decoder) (*jsonValue, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		v := &jsonValue{isObj: t == '{', isArr: t == '['}
		if v.isObj {
			v.members = []jsonMember{}
		}
		for dec.More() {
			if v.isObj {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				val, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				v.members = append(v.members, jsonMember{k.(string), val})
				continue
			}
			val, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			v.items = append(v.items, val)
		}
		_, err := dec.Token() // the closing delimiter
		return v, err
	default:
		raw, err := encodeJSON(t) // json.Number stays as sent
		return &jsonValue{raw: bytes.TrimSpace(raw)}, err
	}
}

func (v *jsonValue) write(b *bytes.Buffer) {
	switch {
	case v.isObj:
		b.WriteByte('{')
		for i, m := range v.members {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := encodeJSON(m.key) // a string always encodes
			b.Write(bytes.TrimSpace(k))
			b.WriteByte(':')
			m.val.write(b)
		}
		b.WriteByte('}')
	case v.isArr:
		b.WriteByte('[')
		for i, it := range v.items {
			if i > 0 {
				b.WriteByte(',')
			}
			it.write(b)
		}
		b.WriteByte(']')
	default:
		b.Write(v.raw)
	}
}

// inlineRefs returns doc, an OpenTool document, with every
// {"$ref":"#/schemas/NAME"} under "functions" and "schemas" replaced by a
// copy of the schema it names; members beside the $ref (a description)
// override the copy's. A reference inside the schema it names is cut: it
// becomes {"type": its type, "description": "... (recursive: see
// schemas.NAME)"}. A reference to no schema is left as it is. A document
// without "$ref" is returned unchanged.
func inlineRefs(doc []byte) ([]byte, error) {
	if !bytes.Contains(doc, []byte(`"$ref"`)) {
		return doc, nil
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	root, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	in := &inliner{schemas: map[string]*jsonValue{}}
	if s := root.get("schemas"); s != nil && s.isObj {
		for _, m := range s.members {
			in.schemas[m.key] = m.val
		}
	}
	for i, m := range root.members {
		switch {
		case m.key == "functions":
			if root.members[i].val, err = in.walk(m.val, nil); err != nil {
				return nil, err
			}
		case m.key == "schemas" && m.val.isObj:
			// Each shared schema is inlined as a reference to it would be.
			out := &jsonValue{isObj: true, members: make([]jsonMember, len(m.val.members))}
			for j, s := range m.val.members {
				val, err := in.walk(s.val, []string{s.key})
				if err != nil {
					return nil, err
				}
				out.members[j] = jsonMember{s.key, val}
			}
			root.members[i].val = out
		}
	}
	var b bytes.Buffer
	root.write(&b)
	return b.Bytes(), nil
}

type inliner struct {
	schemas map[string]*jsonValue
	made    int // values produced, against maxInlined
}

// walk returns a copy of v with its references inlined; open names the
// schemas being inlined around v, outermost first.
func (in *inliner) walk(v *jsonValue, open []string) (*jsonValue, error) {
	if in.made++; in.made > maxInlined {
		return nil, errTooLarge
	}
	switch {
	case v.isArr:
		out := &jsonValue{isArr: true, items: make([]*jsonValue, len(v.items))}
		for i, it := range v.items {
			var err error
			if out.items[i], err = in.walk(it, open); err != nil {
				return nil, err
			}
		}
		return out, nil
	case !v.isObj:
		return v, nil // scalars are never changed, so they can be shared
	}
	if ref := v.get("$ref"); ref != nil && !ref.isObj && !ref.isArr {
		var s string
		if json.Unmarshal(ref.raw, &s) == nil && strings.HasPrefix(s, refPrefix) {
			name := strings.TrimPrefix(s, refPrefix)
			if target, ok := in.schemas[name]; ok {
				return in.inline(v, name, target, open)
			}
		}
	}
	out := &jsonValue{isObj: true, members: make([]jsonMember, len(v.members))}
	for i, m := range v.members {
		val, err := in.walk(m.val, open)
		if err != nil {
			return nil, err
		}
		out.members[i] = jsonMember{m.key, val}
	}
	return out, nil
}

// inline returns the schema name, with the members of ref (the object
// holding the $ref) but $ref itself laid over it.
func (in *inliner) inline(ref *jsonValue, name string, target *jsonValue, open []string) (*jsonValue, error) {
	var base *jsonValue
	if slices.Contains(open, name) {
		base = &jsonValue{isObj: true, members: []jsonMember{}}
		if t := target.get("type"); t != nil {
			base.members = append(base.members, jsonMember{"type", t})
		}
		desc := "recursive: see schemas." + name
		if d := target.get("description"); d != nil {
			var s string
			if json.Unmarshal(d.raw, &s) == nil && s != "" {
				desc = s + " (" + desc + ")"
			}
		}
		raw, _ := encodeJSON(desc)
		base.members = append(base.members, jsonMember{"description", &jsonValue{raw: bytes.TrimSpace(raw)}})
	} else {
		var err error
		if base, err = in.walk(target, append(open[:len(open):len(open)], name)); err != nil {
			return nil, err
		}
		if !base.isObj { // a schema that is not an object: nothing to lay members over
			return base, nil
		}
	}
	for _, m := range ref.members {
		if m.key == "$ref" {
			continue
		}
		val, err := in.walk(m.val, open)
		if err != nil {
			return nil, err
		}
		replaced := false
		for i := range base.members {
			if base.members[i].key == m.key {
				base.members[i].val, replaced = val, true
			}
		}
		if !replaced {
			base.members = append(base.members, jsonMember{m.key, val})
		}
	}
	return base, nil
}

// withDetails returns message followed by data's "details" member, when
// data encodes to an object with a non-empty string there that message
// does not already hold.
func withDetails(message string, data any) string {
	if data == nil {
		return message
	}
	b, err := json.Marshal(data)
	if err != nil {
		return message // writeResponse drops such data, and says so
	}
	// A map, not a struct: a struct field would also match "Details".
	var fields map[string]json.RawMessage
	var details string
	if json.Unmarshal(b, &fields) != nil || json.Unmarshal(fields["details"], &details) != nil {
		return message
	}
	if details == "" || strings.Contains(message, details) {
		return message
	}
	if message == "" {
		return details
	}
	return message + ": " + details
}
