package tools

import (
	"bytes"
	"context"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Func builds a tool from a typed function. decl.Parameters must be nil:
// they are inferred from In, which must be a struct (see the package
// documentation for the rules and the `tool` tag). The handler decodes the
// validated input into an In, calls fn, and returns its Out as the result.
//
// Func reports every problem of the definition (In, its tags, the
// declaration) now, not at registration or on the first call. Set
// Resources and Timeout on the returned tool before adding it.
func Func[In, Out any](decl Declaration, fn func(ctx context.Context, in In) (Out, error)) (*Tool, error) {
	if fn == nil {
		return nil, fmt.Errorf("tools: tool %q: nil function", decl.Name)
	}
	if decl.Parameters != nil {
		return nil, fmt.Errorf("tools: tool %q: Parameters must be nil: Func infers them from %v", decl.Name, reflect.TypeFor[In]())
	}
	params, err := inferParameters(reflect.TypeFor[In]())
	if err != nil {
		return nil, fmt.Errorf("tools: tool %q: %w", decl.Name, err)
	}
	decl.Parameters = params
	assign := flatAssigner(reflect.TypeFor[In]())
	t := &Tool{
		Declaration: decl,
		Handler: func(ctx context.Context, input json.RawMessage) (any, error) {
			// Called by Prepared.Invoke, the input is already decoded: an In
			// of plain fields is filled from that, without a second parse.
			if assign != nil {
				// Input with a repeated member name was decoded last-one-wins, where
				// encoding/json decodes every copy (and may fail on an earlier one):
				// only input without repeats is taken from the decoded form.
				if instance, ok := decoded(ctx, input); ok && noRepeatedMembers(input, instance) {
					var in In
					if assign(reflect.ValueOf(&in).Elem(), instance) {
						return fn(ctx, in)
					}
				}
			}
			in, err := decodeInput[In](input)
			if err != nil {
				return nil, err
			}
			return fn(ctx, in)
		},
	}
	if _, err := checkTool(t); err != nil {
		return nil, err
	}
	return t, nil
}

// inferParameters is jsonschema.ForType plus our tags.
func inferParameters(t reflect.Type) (*jsonschema.Schema, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("input type %v is not a struct (tool_input is a JSON object)", t)
	}
	s, err := jsonschema.ForType(t, nil)
	if err != nil {
		return nil, fmt.Errorf("parameters from %v: %w", t, err)
	}
	if err := applyTags(t, s); err != nil {
		return nil, fmt.Errorf("parameters from %v: %w", t, err)
	}
	if s.Properties == nil {
		// A struct without fields: say "no properties" explicitly, as
		// function-calling APIs expect an object schema to have them.
		s.Properties = map[string]*jsonschema.Schema{}
	}
	return s, nil
}

// decodeInput decodes validated input into an In.
func decodeInput[In any](input json.RawMessage) (In, error) {
	var in In
	err := json.Unmarshal(input, &in)
	if err == nil {
		return in, nil
	}
	// JSON Schema counts 80.0 and 1e2 as integers, so they validate against
	// "type": "integer", but encoding/json will not put them in an int.
	// Write integral numbers as integers and try again.
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && strings.HasPrefix(te.Value, "number") {
		if norm, ok := integralNumbers(input); ok {
			var again In
			if json.Unmarshal(norm, &again) == nil {
				return again, nil
			}
		}
	}
	return in, fmt.Errorf("decoding tool_input: %w", err)
}

// integralNumbers rewrites every integral number of input that is not
// written as an integer (80.0, 1e2) as one. It reports false when there is
// nothing to rewrite or input does not decode.
func integralNumbers(input []byte) ([]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil, false
	}
	changed := false
	var walk func(v any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case json.Number:
			if _, err := strconv.ParseInt(string(v), 10, 64); err == nil {
				return v
			}
			f, err := strconv.ParseFloat(string(v), 64)
			if err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<63 {
				changed = true
				return json.Number(strconv.FormatInt(int64(f), 10))
			}
		case map[string]any:
			for k, e := range v {
				v[k] = walk(e)
			}
		case []any:
			for i, e := range v {
				v[i] = walk(e)
			}
		}
		return v
	}
	v = walk(v)
	if !changed {
		return nil, false
	}
	out, err := json.Marshal(v)
	return out, err == nil
}

// flatAssigner returns a func that fills a struct of type t from validated
// input in the generic form Validate decodes (map[string]any of int64,
// float64, string and bool), or nil when t is not flat: its exported fields
// must all be booleans, strings, integers or float64s under a plain json name,
// none embedded, none with its own decoding (json.Unmarshaler,
// encoding.TextUnmarshaler). The func reports false for anything it does not
// handle exactly as encoding/json would (an integer that overflows, a value of
// another type); the caller then decodes the JSON as before.
func flatAssigner(t reflect.Type) func(v reflect.Value, instance any) bool {
	if t.Kind() != reflect.Struct {
		return nil
	}
	fields := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return nil // its fields are promoted, even from an unexported type
		}
		if !f.IsExported() {
			continue
		}
		if customDecoding(f.Type) {
			return nil
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" && opts == "" {
			continue
		}
		if opts != "" && opts != "omitempty" && opts != "omitzero" {
			return nil // ",string" and the like
		}
		if name == "" {
			name = f.Name
		} else if !plainTag(name) {
			return nil // encoding/json ignores some names in tags, and uses the field's
		}
		if _, dup := fields[name]; dup {
			return nil // encoding/json's rules for clashing names are not worth copying
		}
		switch f.Type.Kind() {
		case reflect.Bool, reflect.String,
			reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
			reflect.Float64:
		default:
			return nil // float32 too: encoding/json rounds the digits to 32 bits directly
		}
		fields[name] = i
	}
	return func(v reflect.Value, instance any) bool {
		m, ok := instance.(map[string]any)
		if !ok {
			return false
		}
		for k, x := range m {
			i, ok := fields[k]
			if !ok || !setScalar(v.Field(i), x) {
				return false
			}
		}
		return true
	}
}

// plainTag reports whether a tag's name is made of ASCII letters, digits, '_' and '-' only: a
// name encoding/json takes as it is.
func plainTag(name string) bool {
	for _, c := range []byte(name) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func customDecoding(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return t.Implements(jsonUnmarshaler) || p.Implements(jsonUnmarshaler) ||
		t.Implements(textUnmarshaler) || p.Implements(textUnmarshaler)
}

// setScalar sets f to x, a value of the generic form, when it fits exactly.
func setScalar(f reflect.Value, x any) bool {
	switch f.Kind() {
	case reflect.Bool:
		b, ok := x.(bool)
		f.SetBool(b)
		return ok
	case reflect.String:
		s, ok := x.(string)
		f.SetString(s)
		return ok
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, ok := x.(int64)
		if !ok {
			fl, isFloat := x.(float64)
			if !isFloat || fl != math.Trunc(fl) || math.Abs(fl) >= 1<<63 {
				return false
			}
			i = int64(fl)
		}
		if f.OverflowInt(i) {
			return false
		}
		f.SetInt(i)
		return true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		i, ok := x.(int64)
		if !ok || i < 0 || f.OverflowUint(uint64(i)) {
			return false // floats and numbers past int64 go the long way
		}
		f.SetUint(uint64(i))
		return true
	case reflect.Float64:
		var fl float64
		switch n := x.(type) {
		case float64:
			fl = n
		case int64:
			if n > 1<<53 || n < -(1<<53) {
				return false // encoding/json parses the digits; let it round
			}
			fl = float64(n)
		default:
			return false
		}
		f.SetFloat(fl)
		return true
	}
	return false
}

// noRepeatedMembers reports whether the valid JSON input, whose decoded form is instance, names
// each of its top-level object's members once: it has as many members as the decoded map.
func noRepeatedMembers(input []byte, instance any) bool {
	m, ok := instance.(map[string]any)
	if !ok {
		return false
	}
	members, depth, inString := 0, 0, false
	for i := 0; i < len(input); i++ {
		c := input[i]
		switch {
		case inString:
			if c == '\\' {
				i++ // the escaped byte cannot end the string
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
		case c == ':' && depth == 1:
			members++
		}
	}
	return members == len(m)
}
