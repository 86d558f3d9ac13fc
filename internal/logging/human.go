package logging

import (
	"context"
	"encoding"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// componentKey is the attribute the human format shows before the message.
const componentKey = "component"

// humanHandler formats records for a person reading a terminal; see the package documentation.
type humanHandler struct {
	out     *output
	level   slog.Leveler
	journal bool
	color   bool

	pre       []byte // attributes from WithAttrs, formatted, each with its leading space
	component string // the innermost component from WithAttrs
	hasComp   bool
	prefix    string // the groups opened by WithGroup, as "g1.g2."
}

func (h *humanHandler) Enabled(_ context.Context, l slog.Level) bool {
	return l >= h.level.Level()
}

func (h *humanHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	d := *h
	d.pre = slices.Clip(h.pre) // so appending copies instead of writing into a sibling's array
	for _, a := range attrs {
		d.pre = appendAttr(d.pre, a, d.prefix, &d.component, &d.hasComp)
	}
	return &d
}

func (h *humanHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	d := *h
	d.prefix = h.prefix + name + "."
	return &d
}

func (h *humanHandler) Handle(_ context.Context, r slog.Record) error {
	// The record's attributes are formatted first, into a buffer of their own, because one of
	// them may be the component, which goes before the message.
	attrs := getBuf()
	defer putBuf(attrs)
	comp, hasComp := h.component, h.hasComp
	r.Attrs(func(a slog.Attr) bool {
		*attrs = appendAttr(*attrs, a, h.prefix, &comp, &hasComp)
		return true
	})

	line := getBuf()
	defer putBuf(line)
	b := *line
	if h.journal {
		b = append(b, priorities[prioritySlot(r.Level)]...)
	} else if !r.Time.IsZero() {
		b = r.Time.Local().AppendFormat(b, "15:04:05.000")
		b = append(b, ' ')
	}
	b = h.appendLevel(b, r.Level)
	b = append(b, ' ')
	body := len(b)
	if hasComp && comp != "" {
		b = appendEscaped(b, comp)
		b = append(b, ':')
		if r.Message != "" {
			b = append(b, ' ')
		}
	}
	b = appendEscaped(b, r.Message)
	noMessage := len(b) == body
	b = append(b, h.pre...)
	b = append(b, *attrs...)
	if noMessage && len(b) > body {
		b = append(b[:body], b[body+1:]...) // the first attribute takes the message's place
	}
	b = append(b, '\n')
	*line = b
	return h.out.write(b)
}

// ANSI colours of the levels; the rest of the line keeps the terminal's own colour.
const (
	colorDebug = "\x1b[2m"  // dim
	colorInfo  = "\x1b[34m" // blue
	colorWarn  = "\x1b[33m" // yellow
	colorError = "\x1b[31m" // red
	colorReset = "\x1b[0m"
)

// appendLevel appends the level padded to 5 columns, so messages line up.
func (h *humanHandler) appendLevel(b []byte, l slog.Level) []byte {
	name := l.String()
	if h.color {
		b = append(b, [...]string{colorError, colorWarn, colorInfo, colorDebug}[prioritySlot(l)]...)
	}
	b = append(b, name...)
	if h.color {
		b = append(b, colorReset...)
	}
	for n := len(name); n < 5; n++ {
		b = append(b, ' ')
	}
	return b
}

// appendAttr appends a as " key=value", flattening groups into dotted keys. A top-level
// component attribute is stored in *comp instead, so the innermost one wins.
func appendAttr(b []byte, a slog.Attr, prefix string, comp *string, hasComp *bool) []byte {
	a.Value = a.Value.Resolve()
	if a.Key == "" && a.Value.Kind() == slog.KindAny && a.Value.Any() == nil {
		return b // slog ignores an empty Attr
	}
	if a.Value.Kind() == slog.KindGroup {
		p := prefix
		if a.Key != "" { // a group without a key is inlined, as slog does
			p = prefix + a.Key + "."
		}
		for _, g := range a.Value.Group() {
			b = appendAttr(b, g, p, comp, hasComp)
		}
		return b
	}
	if prefix == "" && a.Key == componentKey {
		*comp, *hasComp = string(appendValue(nil, a.Value)), true
		return b
	}
	b = append(b, ' ')
	if needsQuote(a.Key) || (prefix != "" && needsQuote(prefix)) {
		b = strconv.AppendQuote(b, prefix+a.Key)
	} else {
		b = append(append(b, prefix...), a.Key...)
	}
	b = append(b, '=')
	switch a.Value.Kind() {
	case slog.KindString:
		return appendMaybeQuoted(b, a.Value.String())
	case slog.KindAny:
		return appendMaybeQuoted(b, anyString(a.Value.Any()))
	default:
		return appendValue(b, a.Value) // numbers, bools, durations and times never need quotes
	}
}

// appendValue appends v unquoted.
func appendValue(b []byte, v slog.Value) []byte {
	switch v.Kind() {
	case slog.KindString:
		return append(b, v.String()...)
	case slog.KindInt64:
		return strconv.AppendInt(b, v.Int64(), 10)
	case slog.KindUint64:
		return strconv.AppendUint(b, v.Uint64(), 10)
	case slog.KindFloat64:
		return strconv.AppendFloat(b, v.Float64(), 'g', -1, 64)
	case slog.KindBool:
		return strconv.AppendBool(b, v.Bool())
	case slog.KindDuration:
		return append(b, v.Duration().String()...)
	case slog.KindTime:
		return v.Time().AppendFormat(b, "2006-01-02T15:04:05.000Z07:00")
	case slog.KindAny:
		return append(b, anyString(v.Any())...)
	default:
		return append(b, v.String()...)
	}
}

// anyString formats a value of kind Any: an error by its message, the rest as slog's text
// handler would. A panicking String or Error method becomes the text, not a crash of the
// goroutine that logged.
func anyString(x any) (s string) {
	defer func() {
		if r := recover(); r != nil {
			if v := reflect.ValueOf(x); v.Kind() == reflect.Pointer && v.IsNil() {
				s = "<nil>"
				return
			}
			s = fmt.Sprintf("!PANIC: %v", r)
		}
	}()
	switch x := x.(type) {
	case error:
		return x.Error()
	case encoding.TextMarshaler:
		t, err := x.MarshalText()
		if err != nil {
			return "!ERROR:" + err.Error()
		}
		return string(t)
	case []byte:
		return string(x)
	default:
		return fmt.Sprintf("%+v", x)
	}
}

// appendMaybeQuoted appends s, quoted only when it would otherwise be ambiguous or break the
// line.
func appendMaybeQuoted(b []byte, s string) []byte {
	if needsQuote(s) {
		return strconv.AppendQuote(b, s)
	}
	return append(b, s...)
}

// needsQuote reports whether a key or value must be quoted: when empty (it would look
// missing), or holding a space, '=' or '"' (they would split it or make it look like the next
// pair), or anything unprintable or invalid UTF-8 (it could break the line or drive the
// terminal).
func needsQuote(s string) bool {
	if s == "" {
		return true
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c <= ' ' || c == '=' || c == '"' || c == 0x7f {
				return true
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return true
		}
		i += n
	}
	return false
}

// appendEscaped appends a message or component as it is, unless it holds a character that
// could break the line or drive the terminal. Then it uses strconv.Quote's escapes (without the
// quotes), the form the Redactor already looks for, so a secret in such a message is still
// found.
func appendEscaped(b []byte, s string) []byte {
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			q := strconv.Quote(s)
			return append(b, q[1:len(q)-1]...)
		}
	}
	return append(b, s...)
}
