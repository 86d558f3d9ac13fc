package opentool

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/tools"
	"github.com/google/jsonschema-go/jsonschema"
)

type point struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

type lampIn struct {
	Room   string   `json:"room" jsonschema:"the room" tool:"enum=kitchen|hall"`
	Level  int      `json:"level" jsonschema:"brightness" tool:"min=0,max=100"`
	Colour *string  `json:"colour,omitempty" tool:"enum=red|green"`
	Tags   []string `json:"tags,omitempty"`
	At     *point   `json:"at,omitempty"`
}

// TestFunctionFromFunc describes a typed tool: parameters in field order,
// nullable pointers and slices, bounds kept as notes.
func TestFunctionFromFunc(t *testing.T) {
	tool, err := tools.Func(tools.Declaration{Name: "lamp", Description: "Set a lamp.", MainType: tools.Remote, SubType: tools.Control},
		func(ctx context.Context, in lampIn) (string, error) { return "", nil })
	if err != nil {
		t.Fatal(err)
	}
	f, schemas, err := FunctionFromDeclaration(tool.Declaration)
	if err != nil {
		t.Fatal(err)
	}
	want := Function{Name: "lamp", Description: "Set a lamp.", Parameters: []Parameter{
		{Name: "room", Description: "the room", Schema: &Schema{Type: "string", Enum: []any{"kitchen", "hall"}}, Required: true},
		{Name: "level", Description: "brightness (0 to 100)", Schema: &Schema{Type: "integer"}, Required: true},
		{Name: "colour", Description: "(may be null)", Schema: &Schema{Type: "string", Enum: []any{"red", "green"}}},
		{Name: "tags", Description: "(may be null)", Schema: &Schema{Type: "array", Items: &Schema{Type: "string"}}},
		{Name: "at", Description: "(may be null; no other properties)", Schema: &Schema{Type: "object",
			Properties: map[string]*Schema{"x": {Type: "number"}, "y": {Type: "number"}}, Required: []string{"x", "y"}}},
	}}
	if d := diff(want, f); d != "" {
		t.Error(d)
	}
	if schemas != nil {
		t.Errorf("schemas = %v, want nil", schemas)
	}
}

// property converts a declaration whose only parameter is p, given as the
// JSON of its schema, with $defs.
func property(t *testing.T, p, defs string) (Function, map[string]*Schema, error) {
	t.Helper()
	params := `{"type":"object","properties":{"p":` + p + `}`
	if defs != "" {
		params += `,"$defs":` + defs
	}
	params += "}"
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(params), &s); err != nil {
		t.Fatalf("bad test schema %s: %v", params, err)
	}
	return FunctionFromDeclaration(tools.Declaration{Name: "f", Description: "d", Parameters: &s})
}

// TestNotes checks what becomes of the JSON Schema that OpenTool cannot
// say: a note in the description, or an equivalent.
func TestNotes(t *testing.T) {
	tests := []struct {
		prop       string
		desc       string // the parameter's description
		schema     *Schema
		wantShared map[string]*Schema
	}{
		{`{"type":"integer","minimum":0,"maximum":100,"description":"Level"}`, "Level (0 to 100)", &Schema{Type: "integer"}, nil},
		{`{"type":"number","minimum":0.5}`, "(at least 0.5)", &Schema{Type: "number"}, nil},
		{`{"type":"number","maximum":1e21,"exclusiveMinimum":-1,"multipleOf":0.25}`, "(at most 1e+21; more than -1; multiple of 0.25)", &Schema{Type: "number"}, nil},
		{`{"type":"number","exclusiveMaximum":10}`, "(less than 10)", &Schema{Type: "number"}, nil},
		{`{"type":"string","pattern":"^#[0-9a-f]{6}$","minLength":7,"maxLength":7}`, "(7 to 7 characters; pattern ^#[0-9a-f]{6}$)", &Schema{Type: "string"}, nil},
		{`{"type":"string","format":"date-time","default":"now","deprecated":true}`, "(format date-time; default \"now\"; deprecated)", &Schema{Type: "string"}, nil},
		{`{"type":"string","default":"` + strings.Repeat("x", 50) + `"}`, "", &Schema{Type: "string"}, nil},
		{`{"type":"array","items":{"type":"string","maxLength":8},"minItems":1,"uniqueItems":true}`, "(at least 1 items; unique items)",
			&Schema{Type: "array", Items: &Schema{Type: "string", Description: "(at most 8 characters)"}}, nil},
		{`{"type":"object","additionalProperties":{"type":"integer"},"maxProperties":4}`, "(at most 4 properties; other properties: integer)",
			&Schema{Type: "object", Properties: map[string]*Schema{}}, nil},
		{`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`, "(no other properties)",
			&Schema{Type: "object", Properties: map[string]*Schema{"a": {Type: "string"}}}, nil},
		{`{"type":"object","additionalProperties":true,"patternProperties":{"^x":{}}}`, "(further constraints: patternProperties)",
			&Schema{Type: "object", Properties: map[string]*Schema{}}, nil},
		{`{"type":"object","additionalProperties":{"anyOf":[{"type":"string"}]}}`, "(other properties allowed)",
			&Schema{Type: "object", Properties: map[string]*Schema{}}, nil},
		{`{"type":"string","anyOf":[{"minLength":1}],"not":{"const":"x"}}`, "(further constraints: anyOf, not)", &Schema{Type: "string"}, nil},
		// Equivalents rather than notes.
		{`{"const":"on"}`, "", &Schema{Type: "string", Enum: []any{"on"}}, nil},
		{`{"type":"integer","const":3,"enum":[3,4]}`, "(must be 3)", &Schema{Type: "integer", Enum: []any{json.Number("3"), json.Number("4")}}, nil},
		{`{"enum":[1,2.5]}`, "", &Schema{Type: "number", Enum: []any{json.Number("1"), json.Number("2.5")}}, nil},
		{`{"enum":[1,2,null]}`, "(may be null)", &Schema{Type: "integer", Enum: []any{json.Number("1"), json.Number("2")}}, nil},
		{`{"enum":[true]}`, "", &Schema{Type: "boolean", Enum: []any{true}}, nil},
		{`{"type":["string","null"],"title":"Name"}`, "Name (may be null)", &Schema{Type: "string"}, nil},
		{`{"type":["integer"]}`, "", &Schema{Type: "integer"}, nil},
		// A $ref keeps its notes; a type beside it says nothing new.
		{`{"$ref":"#/$defs/P","type":"object","description":"where","minProperties":1}`, "where (at least 1 properties)", &Schema{Ref: "#/schemas/P"},
			map[string]*Schema{"P": {Type: "object", Properties: map[string]*Schema{}}}},
	}
	for _, tt := range tests {
		defs := ""
		if tt.wantShared != nil {
			defs = `{"P":{"type":"object"}}`
		}
		f, shared, err := property(t, tt.prop, defs)
		if err != nil {
			t.Errorf("%s: %v", tt.prop, err)
			continue
		}
		want := Parameter{Name: "p", Description: tt.desc, Schema: tt.schema}
		if d := diff(want, f.Parameters[0]); d != "" {
			t.Errorf("%s:\n%s", tt.prop, d)
		}
		if d := diff(tt.wantShared, shared); d != "" {
			t.Errorf("%s: schemas:\n%s", tt.prop, d)
		}
	}
}

func TestFunctionFromDeclarationErrors(t *testing.T) {
	tests := []struct {
		prop, defs, want string
	}{
		{`{"type":["string","integer"]}`, "", `parameters.properties.p: type ["string","integer"] cannot be expressed: OpenTool has one type per schema`},
		{`{"type":"null"}`, "", `parameters.properties.p: type "null" cannot be expressed: OpenTool has boolean, integer, number, string, array, object`},
		{`{"description":"anything"}`, "", `parameters.properties.p: no type: OpenTool needs one of boolean, integer, number, string, array, object`},
		{`{"enum":["a",1]}`, "", `parameters.properties.p: no type: OpenTool needs one of boolean, integer, number, string, array, object`},
		{`{"anyOf":[{"type":"string"},{"type":"integer"}]}`, "", `parameters.properties.p: no type: OpenTool needs one of boolean, integer, number, string, array, object`},
		{`{"type":"array"}`, "", `parameters.properties.p: an array without a single "items" schema cannot be expressed`},
		{`{"type":"array","prefixItems":[{"type":"string"}]}`, "", `parameters.properties.p: an array without a single "items" schema cannot be expressed`},
		{`{"type":"object","properties":{"q":{"type":"array","items":{}}}}`, "", `parameters.properties.p.properties.q.items: no type: OpenTool needs one of boolean, integer, number, string, array, object`},
		{`{"$ref":"#"}`, "", `parameters.properties.p: $ref "#" cannot be expressed: only references to the parameters' own $defs are`},
		{`{"$ref":"#/$defs/Q"}`, `{"P":{"type":"string"}}`, `parameters.properties.p: $ref "#/$defs/Q" cannot be expressed: only references to the parameters' own $defs are`},
		{`{"$ref":"#/$defs/a b"}`, `{"a b":{"type":"string"}}`, `parameters.properties.p: $ref "#/$defs/a b": the name does not match ^[a-zA-Z0-9_.-]{1,64}$`},
		{`{"$ref":"#/$defs/P"}`, `{"P":{"type":"array","items":{"type":["string","boolean"]}}}`, `parameters.$defs.P.items: type ["string","boolean"] cannot be expressed: OpenTool has one type per schema`},
		{`{"type":"string","enum":["a",2]}`, "", `the OpenTool form would be invalid: parameters[0].schema.enum[1]: 2 is not a string`},
		{`{"type":"object","enum":[{}]}`, "", `the OpenTool form would be invalid: parameters[0].schema.enum: only allowed for boolean, integer, number and string, not object`},
	}
	for _, tt := range tests {
		_, _, err := property(t, tt.prop, tt.defs)
		want := `opentool: tool "f": ` + tt.want
		if err == nil || err.Error() != want {
			t.Errorf("%s:\n got: %v\nwant: %s", tt.prop, err, want)
		}
	}
	for _, tt := range []struct {
		params *jsonschema.Schema
		want   string
	}{
		{nil, `opentool: tool "f": parameters: missing`},
		{&jsonschema.Schema{Type: "array"}, `opentool: tool "f": parameters: type is not "object"`},
		{&jsonschema.Schema{Type: "object", Required: []string{"x"}}, `opentool: tool "f": parameters.required: "x" names no property: OpenTool lists required parameters only`},
	} {
		_, _, err := FunctionFromDeclaration(tools.Declaration{Name: "f", Description: "d", Parameters: tt.params})
		if err == nil || err.Error() != tt.want {
			t.Errorf("got %v, want %s", err, tt.want)
		}
	}
}

// TestDefinitions accepts draft-07's "definitions" as well as "$defs".
func TestDefinitions(t *testing.T) {
	var s jsonschema.Schema
	err := json.Unmarshal([]byte(`{"type":"object","properties":{"p":{"$ref":"#/definitions/P"}},"required":["p"],
		"definitions":{"P":{"type":"object","properties":{"next":{"$ref":"#/definitions/P"}}},"Unused":{}}}`), &s)
	if err != nil {
		t.Fatal(err)
	}
	f, schemas, err := FunctionFromDeclaration(tools.Declaration{Name: "f", Description: "d", Parameters: &s})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*Schema{"P": {Type: "object", Properties: map[string]*Schema{"next": {Ref: "#/schemas/P"}}}}
	if d := diff(want, schemas); d != "" {
		t.Error(d)
	}
	if d := diff(Parameter{Name: "p", Schema: &Schema{Ref: "#/schemas/P"}, Required: true}, f.Parameters[0]); d != "" {
		t.Error(d)
	}
}

// TestRoundTrip converts every function of the smart-home document to a
// declaration, registers it, and converts what the registry declares back:
// everything but the return value must survive, and the shared schemas
// must be those the function reaches.
func TestRoundTrip(t *testing.T) {
	doc, r := smartHomeRegistry(t)
	decls := r.Declarations()
	if len(decls) != len(doc.Functions) {
		t.Fatalf("%d declarations for %d functions", len(decls), len(doc.Functions))
	}
	for i, decl := range decls {
		want := doc.Functions[i]
		want.Return = nil
		wantSchemas := map[string]*Schema{}
		for _, name := range doc.reachable(&want) {
			wantSchemas[name] = doc.Schemas[name]
		}
		if len(wantSchemas) == 0 {
			wantSchemas = nil
		}
		f, schemas, err := FunctionFromDeclaration(decl)
		if err != nil {
			t.Errorf("%s: %v", decl.Name, err)
			continue
		}
		if d := diff(want, f); d != "" {
			t.Errorf("%s: function:\n%s", decl.Name, d)
		}
		if d := diff(wantSchemas, schemas); d != "" {
			t.Errorf("%s: schemas:\n%s", decl.Name, d)
		}
	}
	// The test would pass vacuously if the document lacked what it is
	// meant to cover.
	var kinds []string
	for _, f := range doc.Functions {
		for _, p := range f.Parameters {
			kinds = append(kinds, coverage(p)...)
		}
	}
	for _, need := range []string{"required", "optional", "param description", "schema description", "both descriptions",
		"enum string", "enum integer", "enum number", "enum boolean", "nested object", "array of objects", "$ref"} {
		if !slices.Contains(kinds, need) {
			t.Errorf("smarthome.json has no %s parameter", need)
		}
	}
	if doc.Functions[0].Return == nil {
		t.Error("smarthome.json's first function has no return value to drop")
	}
	if s := doc.Schemas["Condition"]; s.Properties["children"].Items.Ref != "#/schemas/Condition" {
		t.Error("smarthome.json has no recursive schema")
	}
}

// coverage names the features a parameter exercises.
func coverage(p Parameter) []string {
	var ks []string
	if p.Required {
		ks = append(ks, "required")
	} else {
		ks = append(ks, "optional")
	}
	switch {
	case p.Description != "" && p.Schema.Description != "":
		ks = append(ks, "both descriptions")
	case p.Description != "":
		ks = append(ks, "param description")
	case p.Schema.Description != "":
		ks = append(ks, "schema description")
	}
	var walk func(s *Schema)
	walk = func(s *Schema) {
		if s.Ref != "" {
			ks = append(ks, "$ref")
		}
		if s.Enum != nil {
			ks = append(ks, "enum "+s.Type)
		}
		if s.Type == "object" && len(s.Properties) > 0 {
			ks = append(ks, "nested object")
		}
		if s.Items != nil && s.Items.Type == "object" {
			ks = append(ks, "array of objects")
		}
		for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
			walk(s.Properties[name])
		}
		if s.Items != nil {
			walk(s.Items)
		}
	}
	walk(p.Schema)
	return ks
}

// TestRoundTripWire goes through the JSON the server receives instead,
// which has no property order: parameters come back sorted by name, and an
// empty "required" list is left out.
func TestRoundTripWire(t *testing.T) {
	doc, r := smartHomeRegistry(t)
	for i, decl := range r.Declarations() {
		data, err := json.Marshal(decl)
		if err != nil {
			t.Fatal(err)
		}
		var wire tools.Declaration
		if err := json.Unmarshal(data, &wire); err != nil {
			t.Fatal(err)
		}
		f, _, err := FunctionFromDeclaration(wire)
		if err != nil {
			t.Errorf("%s: %v", decl.Name, err)
			continue
		}
		want := doc.Functions[i]
		want.Return = nil
		want.Parameters = slices.Clone(want.Parameters)
		slices.SortFunc(want.Parameters, func(a, b Parameter) int { return strings.Compare(a.Name, b.Name) })
		if want.Name == "set_scene" {
			// "required": [] is not sent.
			want.Parameters[1].Schema = &Schema{Type: "object", Properties: want.Parameters[1].Schema.Properties}
		}
		if d := diff(want, f); d != "" {
			t.Errorf("%s:\n%s", decl.Name, d)
		}
	}
}
