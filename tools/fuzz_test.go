package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/devicectl/devicectl/tools"
	"github.com/google/jsonschema-go/jsonschema"
)

// nestedSchema exercises the path-finding of ParamsError details: arrays,
// maps, references, combinators.
const nestedSchema = `{
  "type": "object",
  "properties": {
    "leds": {"type": "array", "maxItems": 8, "items": {"type": "object",
      "properties": {"rgb": {"type": "string", "pattern": "^#[0-9a-f]{6}$"}, "on": {"type": "boolean"}},
      "required": ["rgb"], "additionalProperties": false}},
    "gains": {"type": "object", "additionalProperties": {"type": "number", "minimum": 0}},
    "pos": {"$ref": "#/$defs/point"},
    "mode": {"oneOf": [{"type": "integer", "multipleOf": 2}, {"enum": ["auto", "off"]}]},
    "tags": {"type": ["array", "null"], "uniqueItems": true, "items": {"type": "string", "maxLength": 8}}
  },
  "patternProperties": {"^x-": {"type": "string"}},
  "$defs": {"point": {"type": "object", "properties": {"x": {"type": "integer", "maximum": 10}}, "required": ["x"]}}
}`

// FuzzValidate feeds arbitrary execute inputs to a registry of the builtin
// tools' shapes plus hand-written nested and recursive schemas. Whatever arrives, Validate
// must not panic, must fail only with a one-line *ParamsError worded from the
// schema, and input it accepts must decode into the typed tools' inputs.
func FuzzValidate(f *testing.F) {
	r := newRegistry(f)
	for name, schema := range map[string]string{"nested": nestedSchema, "tree": treeSchema} {
		var params jsonschema.Schema
		if err := json.Unmarshal([]byte(schema), &params); err != nil {
			f.Fatal(err)
		}
		err := r.Add(&tools.Tool{
			Declaration: tools.Declaration{Name: name, Description: "d", MainType: tools.Remote, SubType: tools.Control, Parameters: &params},
			Handler:     nop,
		})
		if err != nil {
			f.Fatal(err)
		}
	}
	// The seed corpus is in testdata/fuzz/FuzzValidate.
	f.Fuzz(func(t *testing.T, name string, input []byte) {
		tool, err := r.Validate(name, input)
		if err != nil {
			var pe *tools.ParamsError
			if !errors.As(err, &pe) {
				t.Fatalf("Validate(%q, %q) = %v, want a *ParamsError", name, input, err)
			}
			if pe.Details == "" || strings.Contains(pe.Details, "\n") || !utf8.ValidString(pe.Details) {
				t.Fatalf("Validate(%q, %q): bad details %q", name, input, pe.Details)
			}
			// The details come from the walk of the schema, not jsonschema-go's text.
			if strings.HasPrefix(pe.Details, "tool_input: does not match the parameters: ") {
				t.Fatalf("Validate(%q, %q): details %q not worded from the schema", name, input, pe.Details)
			}
			return
		}
		if _, err := tool.Invoke(context.Background(), input); err != nil {
			t.Fatalf("Validate(%q, %q) accepted input the tool cannot decode: %v", name, input, err)
		}
	})
}
