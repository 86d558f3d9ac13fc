package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/tools"
	"github.com/google/jsonschema-go/jsonschema"
)

func TestValidate(t *testing.T) {
	r := newRegistry(t)
	tests := []struct {
		name, tool, input string
		details           string // "" means valid
	}{
		{name: "integer", tool: "amplify_volume", input: `{"level":80}`},
		{name: "integer written as float", tool: "amplify_volume", input: `{"level":80.0}`},
		{name: "integer with exponent", tool: "amplify_volume", input: `{"level":1e2}`},
		{name: "bounds inclusive low", tool: "amplify_volume", input: `{"level":0}`},
		{name: "bounds inclusive high", tool: "amplify_volume", input: ` {"level":100} `},
		{name: "enum", tool: "set_virtual_human_expression", input: `{"expression":"cry"}`},
		{name: "no params", tool: "get_device_status", input: `{}`},

		{name: "fraction", tool: "amplify_volume", input: `{"level":80.5}`,
			details: `tool_input.level: 80.5 is not an integer`},
		{name: "string for integer", tool: "amplify_volume", input: `{"level":"80"}`,
			details: `tool_input.level: "80" is a string, not an integer`},
		{name: "bool for integer", tool: "amplify_volume", input: `{"level":true}`,
			details: `tool_input.level: true is a boolean, not an integer`},
		{name: "null for integer", tool: "amplify_volume", input: `{"level":null}`,
			details: `tool_input.level: null is not an integer`},
		{name: "object for integer", tool: "amplify_volume", input: `{"level":{"v":1}}`,
			details: `tool_input.level: {"v":1} is an object, not an integer`},
		{name: "above maximum", tool: "amplify_volume", input: `{"level":150}`,
			details: `tool_input.level: 150 is greater than the maximum 100`},
		{name: "below minimum", tool: "amplify_volume", input: `{"level":-1}`,
			details: `tool_input.level: -1 is less than the minimum 0`},
		{name: "huge integer", tool: "amplify_volume", input: `{"level":123456789012345678901234567890}`,
			details: `tool_input.level: 1.2345678901234568e+29 is greater than the maximum 100`},
		{name: "number out of float range", tool: "amplify_volume", input: `{"level":1e400}`,
			details: `tool_input.level: 1e400 is out of range`},
		{name: "missing required", tool: "amplify_volume", input: `{}`,
			details: `tool_input: missing required property "level"`},
		{name: "misspelt property", tool: "amplify_volume", input: `{"volume":80}`,
			details: `tool_input: unknown property "volume" (known: level)`},
		{name: "extra property", tool: "amplify_volume", input: `{"level":80,"Level":150}`,
			details: `tool_input: unknown property "Level" (known: level)`},
		{name: "params for a tool without", tool: "get_device_status", input: `{"verbose":true,"x y":1}`,
			details: `tool_input: unknown properties "verbose", "x y" (takes no properties)`},
		{name: "many extra properties", tool: "get_device_status", input: `{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7}`,
			details: `tool_input: unknown properties "a", "b", "c", "d", "e" and 2 more (takes no properties)`},
		{name: "not in enum", tool: "set_virtual_human_expression", input: `{"expression":"happy"}`,
			details: `tool_input.expression: "happy" is not one of close_eyes_smile, close_eyes, amazed, smile, cry, idle`},
		{name: "enum is case sensitive", tool: "set_virtual_human_expression", input: `{"expression":"Smile"}`,
			details: `tool_input.expression: "Smile" is not one of close_eyes_smile, close_eyes, amazed, smile, cry, idle`},
		{name: "number for enum string", tool: "set_virtual_human_expression", input: `{"expression":3}`,
			details: `tool_input.expression: 3 is an integer, not a string`},
		{name: "long value abbreviated", tool: "set_virtual_human_expression", input: `{"expression":"` + strings.Repeat("é", 100) + `"}`,
			details: `tool_input.expression: "` + strings.Repeat("é", 30) + `… is not one of close_eyes_smile, close_eyes, amazed, smile, cry, idle`},

		{name: "nested too deep", tool: "amplify_volume", input: `{"level":80,"x":` + strings.Repeat(`[`, 40) + strings.Repeat(`]`, 40) + `}`,
			details: `tool_input.x[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]: nested more than 32 levels deep`},
		{name: "absent input", tool: "amplify_volume", input: ``, details: `tool_input is required`},
		{name: "null input", tool: "amplify_volume", input: `null`, details: `tool_input is required`},
		{name: "array input", tool: "amplify_volume", input: `[80]`,
			details: `tool_input: [80] is an array, not an object`},
		{name: "number input", tool: "amplify_volume", input: `80`,
			details: `tool_input: 80 is an integer, not an object`},
		{name: "string input", tool: "amplify_volume", input: `"{\"level\":80}"`,
			details: `tool_input: "{\"level\":80}" is a string, not an object`},
		{name: "not JSON", tool: "amplify_volume", input: `{"level":`,
			details: `tool_input is not valid JSON: unexpected EOF`},
		{name: "two values", tool: "amplify_volume", input: `{"level":1} {}`,
			details: `tool_input is not valid JSON: data after the value`},
		{name: "unknown tool", tool: "foo", input: `{}`, details: `unknown tool "foo"`},
		{name: "no tool name", tool: "", input: `{}`, details: `tool_name is required`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, err := r.Validate(tt.tool, json.RawMessage(tt.input))
			if tt.details == "" {
				if err != nil {
					t.Fatalf("Validate(%s, %s) = %v, want valid", tt.tool, tt.input, err)
				}
				if tool == nil || tool.Name != tt.tool {
					t.Fatalf("Validate(%s, %s) returned tool %v", tt.tool, tt.input, tool)
				}
				return
			}
			var pe *tools.ParamsError
			if !errors.As(err, &pe) {
				t.Fatalf("Validate(%s, %s) = %v, %v; want a *ParamsError", tt.tool, tt.input, tool, err)
			}
			if pe.Details != tt.details {
				t.Errorf("Validate(%s, %s) details\n got %s\nwant %s", tt.tool, tt.input, pe.Details, tt.details)
			}
			if tool != nil {
				t.Errorf("Validate returned tool %s with an error", tool.Name)
			}
		})
	}
}

// TestValidateThenInvoke checks that what validates also decodes: JSON
// Schema counts 80.0 as an integer, encoding/json does not.
func TestValidateThenInvoke(t *testing.T) {
	r := newRegistry(t)
	for _, input := range []string{`{"level":80}`, `{"level":80.0}`, `{"level":8e1}`, `{"level":0.8e2}`} {
		tool, err := r.Validate("amplify_volume", json.RawMessage(input))
		if err != nil {
			t.Fatalf("Validate(%s): %v", input, err)
		}
		res, err := tool.Invoke(context.Background(), json.RawMessage(input))
		if err != nil {
			t.Fatalf("Invoke(%s): %v", input, err)
		}
		if got := res.(volumeOut).Level; got != 80 {
			t.Errorf("Invoke(%s): level %d, want 80", input, got)
		}
	}
}

// TestValidateDetailsHandWritten covers schemas written by hand rather than
// inferred: nested objects, arrays, maps, references and combinators, where
// the path to the offending value has to be worked out.
func TestValidateDetailsHandWritten(t *testing.T) {
	const schema = `{
	  "type": "object",
	  "properties": {
	    "leds": {"type": "array", "maxItems": 3, "items": {
	      "type": "object",
	      "properties": {"rgb": {"type": "string", "pattern": "^#[0-9a-f]{6}$"}, "on": {"type": "boolean"}},
	      "required": ["rgb"]}},
	    "gains": {"type": "object", "additionalProperties": {"type": "number", "exclusiveMinimum": 0}},
	    "pos": {"$ref": "#/$defs/point"},
	    "mode": {"anyOf": [{"type": "integer"}, {"const": "auto"}]},
	    "step": {"type": "number", "multipleOf": 0.5},
	    "name": {"type": "string", "minLength": 2, "maxLength": 4},
	    "tags": {"type": ["array", "null"], "items": {"type": "string"}},
	    "weird key/~": {"type": "integer"}
	  },
	  "$defs": {"point": {"type": "object", "properties": {"x": {"type": "integer", "maximum": 10}}}}
	}`
	r := tools.NewRegistry()
	for name, schema := range map[string]string{"t": schema, "tree": treeSchema, "ext": extSchema} {
		var params jsonschema.Schema
		if err := json.Unmarshal([]byte(schema), &params); err != nil {
			t.Fatal(err)
		}
		err := r.Add(&tools.Tool{
			Declaration: tools.Declaration{Name: name, Description: "d", MainType: tools.Remote, SubType: tools.Control, Parameters: &params},
			Handler:     nop,
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct{ tool, input, details string }{
		{"t", `{"leds":[{"rgb":"#00ff00"},{"rgb":"red"}]}`, `tool_input.leds[1].rgb: "red" does not match the pattern "^#[0-9a-f]{6}$"`},
		{"t", `{"leds":[{"rgb":"#00ff00"},{"rgb":"#000000","on":1}]}`, `tool_input.leds[1].on: 1 is an integer, not a boolean`},
		{"t", `{"leds":[{"rgb":"#00ff00"},{"on":true}]}`, `tool_input.leds[1]: missing required property "rgb"`},
		{"t", `{"leds":[{"rgb":"#000000"},{"rgb":"#000000"},{"rgb":"#000000"},{"rgb":"#000000"}]}`, `tool_input.leds: has 4 items, more than the maximum 3`},
		{"t", `{"gains":{"a":1,"b":0}}`, `tool_input.gains.b: 0 is not greater than 0`},
		{"t", `{"gains":{"x-y":"loud"}}`, `tool_input.gains["x-y"]: "loud" is a string, not a number`},
		{"t", `{"pos":{"x":11}}`, `tool_input.pos.x: 11 is greater than the maximum 10`},
		{"t", `{"mode":"manual"}`, `tool_input.mode: "manual" does not match any of the allowed forms`},
		{"t", `{"step":0.3}`, `tool_input.step: 0.3 is not a multiple of 0.5`},
		{"t", `{"name":"a"}`, `tool_input.name: "a" is shorter than the minimum length 2`},
		{"t", `{"name":"abcde"}`, `tool_input.name: "abcde" is longer than the maximum length 4`},
		{"t", `{"tags":"x"}`, `tool_input.tags: "x" is a string, not an array or null`},
		{"t", `{"tags":["a",2]}`, `tool_input.tags[1]: 2 is an integer, not a string`},
		{"t", `{"weird key/~":"1"}`, `tool_input["weird key/~"]: "1" is a string, not an integer`},
		{"t", `{"leds":[],"gains":{},"pos":{"x":1},"mode":"auto","step":1.5,"name":"ab","tags":null}`, ``},
		{"tree", `{"value":1,"children":[{"value":2},{"value":"x"}]}`, `tool_input.children[1].value: "x" is a string, not an integer`},
		{"ext", `{"id":"abc"}`, `tool_input.id: "abc" is a string, not an integer`},
	}
	for _, tt := range tests {
		_, err := r.Validate(tt.tool, json.RawMessage(tt.input))
		var got string
		if pe := (*tools.ParamsError)(nil); errors.As(err, &pe) {
			got = pe.Details
		} else if err != nil {
			t.Fatalf("Validate(%s) = %v, want a *ParamsError", tt.input, err)
		}
		if got != tt.details {
			t.Errorf("Validate(%s, %s) details\n got %s\nwant %s", tt.tool, tt.input, got, tt.details)
		}
	}
}

// treeSchema refers to itself; extSchema has a sub-schema with its own $id,
// which jsonschema-go names by that id rather than a pointer.
const (
	treeSchema = `{"type":"object","properties":{"value":{"type":"integer"},"children":{"type":"array","items":{"$ref":"#"}}}}`
	extSchema  = `{"type":"object","properties":{"id":{"$id":"https://example.com/id","type":"integer"}}}`
)

func TestParamsErrorError(t *testing.T) {
	err := &tools.ParamsError{Details: `unknown tool "foo"`}
	if got, want := err.Error(), `invalid params: unknown tool "foo"`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
