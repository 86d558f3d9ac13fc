package tools

import (
	"bytes"
	"context"
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
	t := &Tool{
		Declaration: decl,
		Handler: func(ctx context.Context, input json.RawMessage) (any, error) {
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
