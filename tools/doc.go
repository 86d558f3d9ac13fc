// Package tools holds the tools a device declares to its agent server
// (mcp/registerTools) and runs for it (mcp/tool/execute).
//
// # Concepts
//
// A Declaration is one entry of registerTools' params.tools, exactly as on
// the wire: name, description, main_type, sub_type and parameters, a JSON
// Schema of type "object" for tool_input. A Tool adds what only the device
// needs: the Handler that runs it, the hardware Resources it drives (calls
// sharing one are never run at the same time) and an optional Timeout.
//
// A Registry is the device's set of tools. Add checks a tool completely, so
// that a bad definition fails at startup rather than on the server's first
// call: the name must match ^[a-zA-Z0-9_-]{1,64}$ and be unique, the
// description must not be empty (the server's model reads it to decide when
// to call the tool), main_type and sub_type must be in the protocol's enums,
// the handler must be set, and the parameters must be an object schema that
// github.com/google/jsonschema-go resolves. Add also refuses what that
// library accepts but cannot validate: a type name that is not a JSON type,
// a $ref that is not a local JSON Pointer ("#", "#/$defs/x"; no anchors,
// other documents or $dynamicRef), and references that loop without moving
// into the input ({"allOf":[{"$ref":"#"}]}), on which validation would
// overflow the stack. Recursive schemas whose references go through
// properties or items are fine. The resolved schema is kept, so each call
// only validates.
//
// For every execute request the caller (package device) runs
//
//	tool, err := registry.Validate(name, input) // *ParamsError -> -32602
//	result, err := tool.Invoke(ctx, input)      // error -> -32000
//
// Validate refuses an unknown tool, an absent or null tool_input, and input
// that does not match the schema, with a *ParamsError whose Details name the
// offending value the way the server's developer wrote it:
//
//	tool_input.level: 150 is greater than the maximum 100
//	tool_input.expression: "happy" is not one of close_eyes_smile, close_eyes, amazed, smile, cry, idle
//	tool_input: missing required property "level"
//	tool_input: unknown property "volume" (known: level)
//	tool_input.leds[1].rgb: "red" does not match the pattern "^#[0-9a-f]{6}$"
//	unknown tool "foo"
//	tool_input is required
//
// jsonschema-go decides whether the input is valid; the details are worded
// from the keyword that failed, the schema holding it and the value, found
// by walking the schema and the input together, not from jsonschema-go's
// error text (testdata/details.golden has them for every keyword).
//
// Input nested more than 32 levels deep is refused before validation.
//
// A handler is therefore only called with valid input, and an error it
// returns is a domain failure (the hardware refused, a read failed) whose
// Error() goes to a human: keep it short.
//
// # Numbers
//
// Integers are checked as JSON Schema defines them: 80 and 80.0 are
// integers, 80.5 and "80" are not. Numbers are decoded exactly (an integer
// as int64, anything else as float64) so that bounds hold for any input; a
// number beyond float64 (1e400) is refused with its path. A Go int field
// without a max tag accepts any integer JSON Schema does; one beyond int64
// then fails to decode in the handler (a -32000 failure, not -32602): bound
// integer fields with min and max.
//
// # Typed tools
//
// Func builds a Tool from a function func(ctx, In) (Out, error). The
// parameters are inferred from In, which must be a struct, by
// jsonschema.For:
//
//   - a property per exported field, named as encoding/json names it;
//   - the property's type from the field's Go type (int -> integer,
//     pointer -> may also be null, slice -> array, ...);
//   - the description from a `jsonschema:"..."` tag;
//   - every field without omitempty or omitzero is required.
//
// The `tool` tag adds what a Go type cannot say. It is a comma-separated
// list of key=value items, taken literally (no spaces, no quoting):
//
//	enum=a|b|c   the value must be one of these; for string, integer
//	             and number fields (parsed as the field's type)
//	min=N        minimum (inclusive); integer and number fields
//	max=N        maximum (inclusive); integer and number fields
//
// For example:
//
//	type volumeInput struct {
//		Level int `json:"level" jsonschema:"0 is mute, 100 is loudest" tool:"min=0,max=100"`
//	}
//
// On a slice or array field the constraints apply to its items; on a
// pointer field an enum also admits null. Func rejects a malformed tag with
// an error naming the tool, the type, the field and the problem: an unknown
// or repeated key, a value that does not parse as the field's type, an empty
// or repeated enum value, min above max, a bound looser than the Go type's
// own (min=-1 on a uint), or a tag on a field that is not part of the input.
//
// Inferred schemas keep jsonschema.For's "additionalProperties": false, so
// a property the schema does not declare is refused. The seed's hand-written
// schemas leave it out, but for typed tools it is required for safety:
// encoding/json matches field names case-insensitively, so without it
// {"level": 50, "Level": 150} would validate on "level" and decode 150.
// It also turns a misspelt optional property into an error the sender can
// correct instead of a silently ignored value. Hand-written schemas get
// whatever they say.
//
// A struct without fields gives {"type":"object","properties":{},
// "additionalProperties":false}: a tool that takes no parameters.
package tools
