package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/google/jsonschema-go/jsonschema"
)

// ParamsError is an execute request the device refuses before running
// anything: unknown tool, absent input, input that does not match the
// tool's schema. It becomes -32602 "Invalid params" with Details as
// data.details.
type ParamsError struct {
	// Details says exactly what is wrong, naming the field as the server's
	// developer wrote it, e.g.
	// `tool_input.level: 150 is greater than the maximum 100`.
	Details string
}

func (e *ParamsError) Error() string { return "invalid params: " + e.Details }

func paramsErrorf(format string, args ...any) *ParamsError {
	return &ParamsError{Details: fmt.Sprintf(format, args...)}
}

// Validate checks an execute request: the tool must be registered and input
// must be present, not null, and match the tool's parameters. Every failure
// is a *ParamsError. On success it returns the tool, ready for Invoke with
// the same input.
func (r *Registry) Validate(name string, input json.RawMessage) (*Tool, error) {
	p, err := r.Prepare(name, input)
	if err != nil {
		return nil, err
	}
	return p.Tool, nil
}

// Prepared is an execute request that Validate accepted.
type Prepared struct {
	Tool  *Tool
	Input json.RawMessage // as given to Prepare
}

// Prepare is Validate, returning the request ready for Invoke.
func (r *Registry) Prepare(name string, input json.RawMessage) (*Prepared, error) {
	if name == "" {
		return nil, paramsErrorf("tool_name is required")
	}
	e := r.lookup(name)
	if e == nil {
		return nil, paramsErrorf("unknown tool %q", name)
	}
	// JSON's whitespace only: bytes.TrimSpace would also drop \f and \v,
	// which the handler's decoder then rejects.
	trimmed := bytes.Trim(input, " \t\r\n")
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return nil, paramsErrorf("tool_input is required")
	}
	instance, err := decodeInstance(trimmed)
	if err != nil {
		return nil, err
	}
	if e.quick == nil || !e.quick.valid(instance) {
		if err := e.schema.Validate(instance); err != nil {
			return nil, &ParamsError{Details: explain(e.schema, instance, err)}
		}
	}
	return &Prepared{Tool: e.tool, Input: input}, nil
}

// Invoke runs the tool's handler on the prepared input, as Tool.Invoke does.
func (p *Prepared) Invoke(ctx context.Context) (any, error) {
	return p.Tool.Invoke(ctx, p.Input)
}

// decodeInstance decodes input into the generic form jsonschema-go
// validates: map[string]any, []any, string, bool, nil and numbers.
//
// Numbers need care. jsonschema-go classifies a value by its reflect kind,
// so a json.Number (a string kind) would fail every "integer" check; and
// plain decoding into float64 fails on 1e400 without saying where. So the
// decoder keeps numbers as json.Number and number() turns each into an
// int64 when it is one (exact, even beyond 2^53) or else a float64, which
// jsonschema-go counts as an integer when it has no fraction (80.0, 1e2).
func decodeInstance(input []byte) (any, error) {
	if json.Valid(input) {
		if v, ok := quickInstance(input); ok {
			return v, nil
		}
	}
	return decodeGeneric(input)
}

// decodeGeneric is decodeInstance through encoding/json, for every input: quickInstance's
// reference, and the path that words what is wrong with an input.
func decodeGeneric(input []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, paramsErrorf("tool_input is not valid JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, paramsErrorf("tool_input is not valid JSON: data after the value")
	}
	v, bad := numbers(v, 0)
	if bad != nil {
		return nil, &ParamsError{Details: bad.details()}
	}
	return v, nil
}

// maxDepth bounds how deeply tool_input may nest. No tool needs more, and a
// recursive schema validates one level per nesting on the stack.
const maxDepth = 32

// numbers replaces every json.Number under v, in place, by number's result,
// and checks the nesting depth. On failure it returns what is wrong and
// where, the path built while unwinding so that the common case allocates
// nothing for it.
func numbers(v any, depth int) (any, *badValue) {
	switch v := v.(type) {
	case json.Number:
		return number(v)
	case map[string]any:
		if depth == maxDepth {
			return nil, &badValue{what: fmt.Sprintf("nested more than %d levels deep", maxDepth)}
		}
		for k, e := range v {
			n, bad := numbers(e, depth+1)
			if bad != nil {
				bad.at = append(bad.at, keySegment(k))
				return nil, bad
			}
			v[k] = n
		}
	case []any:
		if depth == maxDepth {
			return nil, &badValue{what: fmt.Sprintf("nested more than %d levels deep", maxDepth)}
		}
		for i, e := range v {
			n, bad := numbers(e, depth+1)
			if bad != nil {
				bad.at = append(bad.at, indexSegment(i))
				return nil, bad
			}
			v[i] = n
		}
	}
	return v, nil
}

// badValue is a value of tool_input that cannot be validated.
type badValue struct {
	what string
	at   []string // path segments, innermost first
}

func (b *badValue) details() string {
	slices.Reverse(b.at)
	return instancePath(b.at) + ": " + b.what
}

func number(n json.Number) (any, *badValue) {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i, nil
	}
	// ParseFloat fails only beyond ±MaxFloat64: an underflow (1e-400) reads
	// as 0 without error, which is what the sender meant.
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return nil, &badValue{what: abbreviate(string(n)) + " is out of range"}
	}
	return f, nil
}

// quickCheck validates the simplest parameters without jsonschema-go: an
// object of scalar properties with a type each, integer bounds and string
// enums, as Func infers them from a struct of plain fields and as the seed
// declares its tools. It only ever says "valid" when it is sure; for
// anything else, every invalid input included, it says "not sure" and the
// full validation runs, which also words the error. Full validation costs
// several times the decoding it follows, and nearly every call is valid.
type quickCheck struct {
	props    map[string]quickProp
	required []string
	closed   bool // additionalProperties: false
}

type quickProp struct {
	typ      string          // "integer", "number", "string" or "boolean"
	min, max *int64          // inclusive bounds; nil: none
	enum     map[string]bool // a string's allowed values; nil: any
}

// maxExact bounds the integers quickCheck compares: a float64 holds them
// exactly, so an integer and a float compare as JSON Schema means.
const maxExact = 1 << 53

// compileQuick returns the quick check for schema, or nil when it uses
// anything quickCheck does not know exactly. It reads the schema as JSON, so
// that a keyword it has not heard of is seen and turns it down.
func compileQuick(schema *jsonschema.Schema) *quickCheck {
	b, err := json.Marshal(schema)
	if err != nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var top map[string]any
	if dec.Decode(&top) != nil {
		return nil
	}
	q := &quickCheck{props: map[string]quickProp{}}
	for k, v := range top {
		switch k {
		case "description", "title", "$schema":
		case "type":
			if v != "object" {
				return nil
			}
		case "additionalProperties":
			if v != false {
				return nil
			}
			q.closed = true
		case "required":
			list, ok := v.([]any)
			if !ok {
				return nil
			}
			for _, r := range list {
				name, ok := r.(string)
				if !ok {
					return nil
				}
				q.required = append(q.required, name)
			}
		case "properties":
			props, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			for name, ps := range props {
				p, ok := compileProp(ps)
				if !ok {
					return nil
				}
				q.props[name] = p
			}
		default:
			return nil
		}
	}
	return q
}

func compileProp(v any) (quickProp, bool) {
	var p quickProp
	m, ok := v.(map[string]any)
	if !ok {
		return p, false
	}
	p.typ, _ = m["type"].(string)
	switch p.typ {
	case "integer", "number", "string", "boolean":
	default:
		return p, false
	}
	bound := func(x any) (*int64, bool) {
		n, ok := x.(json.Number)
		if !ok || (p.typ != "integer" && p.typ != "number") {
			return nil, false
		}
		i, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil || i > maxExact || i < -maxExact {
			return nil, false
		}
		return &i, true
	}
	for k, x := range m {
		switch k {
		case "type", "description", "title":
		case "minimum":
			if p.min, ok = bound(x); !ok {
				return p, false
			}
		case "maximum":
			if p.max, ok = bound(x); !ok {
				return p, false
			}
		case "enum":
			list, ok := x.([]any)
			if !ok || p.typ != "string" {
				return p, false
			}
			p.enum = make(map[string]bool, len(list))
			for _, e := range list {
				s, ok := e.(string)
				if !ok {
					return p, false
				}
				p.enum[s] = true
			}
		default:
			return p, false
		}
	}
	return p, true
}

// valid reports whether instance, as decodeInstance returns it, is sure to
// validate.
func (q *quickCheck) valid(instance any) bool {
	m, ok := instance.(map[string]any)
	if !ok {
		return false
	}
	for _, r := range q.required {
		if _, ok := m[r]; !ok {
			return false
		}
	}
	for k, v := range m {
		p, ok := q.props[k]
		if !ok {
			if q.closed {
				return false
			}
			continue
		}
		if !p.valid(v) {
			return false
		}
	}
	return true
}

func (p quickProp) valid(v any) bool {
	switch p.typ {
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "string":
		s, ok := v.(string)
		return ok && (p.enum == nil || p.enum[s])
	}
	// A number: an integer within maxExact, or (for "number") a float.
	var f float64
	switch n := v.(type) {
	case int64:
		if n > maxExact || n < -maxExact {
			return false
		}
		f = float64(n)
	case float64:
		if p.typ != "number" {
			return false // 80.0 is an integer to JSON Schema: let the full check say so
		}
		f = n
	default:
		return false
	}
	return (p.min == nil || f >= float64(*p.min)) && (p.max == nil || f <= float64(*p.max))
}
