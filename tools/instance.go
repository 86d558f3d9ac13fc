package tools

import (
	"encoding/json"
	"unicode/utf8"
)

// quickInstance decodes JSON that json.Valid accepted into the form decodeInstance returns, in one pass over the
// bytes and with only the allocations the result itself needs: every execute goes through it,
// and encoding/json's Decoder (which UseNumber needs) costs more than the rest of a call's
// allocations together. It covers the common input. For anything else, a number that is neither
// a plain int64 nor a finite float64, nesting past maxDepth, a string that is not plain UTF-8,
// it returns ok false, and the caller takes the slow path, which also words any error. So the two
// never disagree (FuzzQuickInstance holds it to that).
func quickInstance(data []byte) (v any, ok bool) {
	d := instanceDecoder{data: data}
	v, ok = d.value(0)
	if !ok {
		return nil, false
	}
	d.space()
	return v, d.pos == len(d.data)
}

// instanceDecoder reads JSON that json.Valid accepted; it still checks what it relies on, and
// gives up (false) rather than trust its input.
type instanceDecoder struct {
	data []byte
	pos  int
}

func (d *instanceDecoder) space() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\r', '\n':
			d.pos++
		default:
			return
		}
	}
}

func (d *instanceDecoder) value(depth int) (any, bool) {
	d.space()
	if d.pos >= len(d.data) {
		return nil, false
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		return d.object(depth)
	case c == '[':
		return d.array(depth)
	case c == '"':
		return d.str()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	case c == '-' || ('0' <= c && c <= '9'):
		return d.number()
	}
	return nil, false
}

func (d *instanceDecoder) literal(word string) bool {
	if len(d.data)-d.pos < len(word) || string(d.data[d.pos:d.pos+len(word)]) != word {
		return false
	}
	d.pos += len(word)
	return true
}

// object reads an object; a repeated key keeps its last value, as encoding/json does.
func (d *instanceDecoder) object(depth int) (any, bool) {
	if depth == maxDepth {
		return nil, false
	}
	d.pos++ // '{'
	m := make(map[string]any)
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		return m, true
	}
	for {
		d.space()
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return nil, false
		}
		k, ok := d.str()
		if !ok {
			return nil, false
		}
		d.space()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return nil, false
		}
		d.pos++
		v, ok := d.value(depth + 1)
		if !ok {
			return nil, false
		}
		m[k.(string)] = v
		if more, ok := d.after('}'); !more {
			return m, ok
		}
	}
}

func (d *instanceDecoder) array(depth int) (any, bool) {
	if depth == maxDepth {
		return nil, false
	}
	d.pos++ // '['
	a := []any{}
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		return a, true
	}
	for {
		v, ok := d.value(depth + 1)
		if !ok {
			return nil, false
		}
		a = append(a, v)
		if more, ok := d.after(']'); !more {
			return a, ok
		}
	}
}

// after reads what follows an element of an object or array: a comma (more), or the closing
// bracket (done, ok), or anything else (done, not ok).
func (d *instanceDecoder) after(closing byte) (more, ok bool) {
	d.space()
	if d.pos >= len(d.data) {
		return false, false
	}
	switch d.data[d.pos] {
	case ',':
		d.pos++
		return true, true
	case closing:
		d.pos++
		return false, true
	}
	return false, false
}

// str reads a string with no escapes and valid UTF-8, the only kind whose bytes are its value;
// encoding/json decodes the others (an escape, an invalid byte it replaces with U+FFFD).
func (d *instanceDecoder) str() (any, bool) {
	start := d.pos + 1
	for i := start; i < len(d.data); i++ {
		switch c := d.data[i]; {
		case c == '"':
			s := d.data[start:i]
			if !utf8.Valid(s) {
				return nil, false
			}
			d.pos = i + 1
			return string(s), true
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// number reads a number as number() would convert it: an int64 when it is one, else a float64.
func (d *instanceDecoder) number() (any, bool) {
	start := d.pos
	integer := true
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		if '0' <= c && c <= '9' || c == '-' {
			d.pos++
			continue
		}
		if c == '.' || c == 'e' || c == 'E' || c == '+' {
			integer = false
			d.pos++
			continue
		}
		break
	}
	tok := d.data[start:d.pos]
	if integer {
		if i, ok := smallInt(tok); ok {
			return i, true
		}
	}
	v, bad := number(json.Number(tok))
	return v, bad == nil
}

// smallInt parses an integer of up to 18 digits, which cannot overflow an int64, without the
// allocation strconv's error path costs; anything else is left to number().
func smallInt(tok []byte) (int64, bool) {
	neg := len(tok) > 0 && tok[0] == '-'
	digits := tok
	if neg {
		digits = tok[1:]
	}
	if len(digits) == 0 || len(digits) > 18 || (digits[0] == '0' && len(digits) > 1) {
		return 0, false
	}
	var n int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}
