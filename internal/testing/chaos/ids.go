package chaos

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// SameID reports whether two raw JSON-RPC ids are the same id as the protocol means it ("echoed
// back exactly as received"): strings by their UTF-16 code units, whatever their escapes, and
// numbers by their exact text. Two nulls are the same; null is no other id.
func SameID(a, b json.RawMessage) bool {
	ka, oka := canonID(a)
	kb, okb := canonID(b)
	return oka == okb && ka == kb
}

// canonID returns the key an id is matched by: a string by its value (the device may re-escape
// it), a number by its exact text (it must come back as sent, digit for digit). ok is false for
// a null or absent id.
func canonID(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", false
	}
	if raw[0] == '"' {
		if units, ok := utf16Units(raw); ok {
			return "s" + units, true
		}
		return "r" + string(raw), true
	}
	return "n" + string(raw), true
}

// utf16Units decodes a JSON string token into its UTF-16 code units, two bytes each. Unlike
// encoding/json it keeps what a JavaScript peer would keep: a lone surrogate escape (\ud800)
// stays itself instead of becoming U+FFFD, and a byte that is not UTF-8 stays distinct from
// U+FFFD too. So an id the device cannot echo exactly does not match the one it was sent.
func utf16Units(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[len(raw)-1] != '"' {
		return "", false
	}
	s := raw[1 : len(raw)-1]
	units := make([]uint16, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				units = append(units, 0xDC00|uint16(c)) // a raw byte, as surrogateescape keeps it
			} else {
				units = utf16.AppendRune(units, r)
			}
			i += size
			continue
		}
		if i+1 >= len(s) {
			return "", false
		}
		switch e := s[i+1]; e {
		case 'u':
			if i+6 > len(s) {
				return "", false
			}
			v, err := strconv.ParseUint(string(s[i+2:i+6]), 16, 16)
			if err != nil {
				return "", false
			}
			units = append(units, uint16(v))
			i += 6
			continue
		case 'b':
			units = append(units, '\b')
		case 'f':
			units = append(units, '\f')
		case 'n':
			units = append(units, '\n')
		case 'r':
			units = append(units, '\r')
		case 't':
			units = append(units, '\t')
		case '"', '\\', '/':
			units = append(units, uint16(e))
		default:
			return "", false
		}
		i += 2
	}
	b := make([]byte, 0, 2*len(units))
	for _, u := range units {
		b = append(b, byte(u>>8), byte(u))
	}
	return string(b), true
}
