package transport

import (
	"bytes"
	"encoding/json"
	"iter"
)

// scanner walks a JSON text that encoding/json.Valid has already accepted. It
// never validates: it only finds where tokens start and end, so the frame
// classifier can look at the top-level members without decoding anything.
// Every method assumes valid input; on invalid input results are meaningless
// but the scanner still never reads out of bounds.
type scanner struct {
	data []byte
	pos  int
}

func (s *scanner) skipSpace() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// peek returns the next non-space byte without consuming it, or 0 at the end.
func (s *scanner) peek() byte {
	s.skipSpace()
	if s.pos >= len(s.data) {
		return 0
	}
	return s.data[s.pos]
}

// consume skips space and one byte (a ':' or ',' or bracket).
func (s *scanner) consume() {
	s.skipSpace()
	s.pos++
}

// str returns the raw string token at pos, quotes included.
func (s *scanner) str() []byte {
	if s.pos >= len(s.data) { // only on invalid input
		s.pos = len(s.data)
		return nil
	}
	start := s.pos
	i := start + 1
	for {
		j := bytes.IndexByte(s.data[i:], '"')
		if j < 0 {
			s.pos = len(s.data)
			return s.data[start:]
		}
		i += j
		// The quote is escaped when an odd run of backslashes precedes it.
		// Escapes never end in a backslash except `\\`, so the run starts on
		// an escape boundary and pairs up from its left end.
		k := i
		for k > start+1 && s.data[k-1] == '\\' {
			k--
		}
		if (i-k)%2 == 0 {
			s.pos = i + 1
			return s.data[start:s.pos]
		}
		i++
	}
}

// value skips the value at pos and returns its raw bytes.
func (s *scanner) value() []byte {
	s.skipSpace()
	start := s.pos
	if s.pos >= len(s.data) {
		return nil
	}
	switch s.data[s.pos] {
	case '"':
		return s.str()
	case '{', '[':
		depth := 0
		for s.pos < len(s.data) {
			switch s.data[s.pos] {
			case '"':
				s.str()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.pos++
					return s.data[start:s.pos]
				}
			}
			s.pos++
		}
		return s.data[start:]
	default: // number, true, false, null
		for s.pos < len(s.data) {
			switch s.data[s.pos] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return s.data[start:s.pos]
			}
			s.pos++
		}
		return s.data[start:]
	}
}

// member is one "name": value pair of an object.
type member struct {
	name  []byte // decoded: without quotes, escapes resolved
	value []byte // raw
}

// next returns the next member of the object the scanner is in; the caller
// has consumed the object's '{'. It returns false after consuming the '}'.
func (s *scanner) next() (member, bool) {
	switch s.peek() {
	case '}', 0:
		s.pos++
		return member{}, false
	case ',':
		s.pos++
		s.skipSpace()
	}
	name := s.str()
	if bytes.IndexByte(name, '\\') >= 0 {
		name = unescape(name)
	} else if len(name) >= 2 {
		name = name[1 : len(name)-1]
	}
	s.consume() // ':'
	return member{name: name, value: s.value()}, true
}

// unescape decodes a raw JSON string token. Only used on the rare member name
// that holds escapes, so allocation does not matter here.
func unescape(raw []byte) []byte {
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil
	}
	return []byte(v)
}

// kindOf names a raw JSON value's type for error details.
func kindOf(raw []byte) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

// Members yields the members of the JSON object raw, in order: each name decoded (escapes
// resolved) and each value's raw bytes, which alias raw. raw must be JSON that a Read has
// passed, such as a Message's Params or Result: Members only finds where tokens end, it does not
// validate. It yields nothing when raw is not an object.
func Members(raw json.RawMessage) iter.Seq2[[]byte, json.RawMessage] {
	return func(yield func([]byte, json.RawMessage) bool) {
		s := scanner{data: raw}
		if s.peek() != '{' {
			return
		}
		s.pos++
		for {
			m, ok := s.next()
			if !ok || !yield(m.name, m.value) {
				return
			}
		}
	}
}
