package opentool

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

func readSmartHome(t testing.TB) *Document {
	t.Helper()
	data, err := os.ReadFile("testdata/smarthome.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := Parse(data)
	if err != nil {
		t.Fatalf("Parse(smarthome.json):\n%v", err)
	}
	return doc
}

func TestParseSmartHome(t *testing.T) {
	doc := readSmartHome(t)
	if doc.OpenTool != "1.1.0" || doc.Info.Title != "Smart home" || doc.Info.Version != "2.3.0" {
		t.Errorf("header = %q %+v", doc.OpenTool, doc.Info)
	}
	if doc.Server == nil || doc.Server.URL != "https://home.example.com/opentool" || doc.Server.Description != "The flat's hub" {
		t.Errorf("Server = %+v", doc.Server)
	}
	var names []string
	for _, f := range doc.Functions {
		names = append(names, f.Name)
	}
	if got, want := strings.Join(names, " "), "set_light set_scene set_climate create_automation list_rooms"; got != want {
		t.Errorf("functions = %s, want %s", got, want)
	}
	light := doc.Function("set_light")
	want := Parameter{Name: "brightness", Description: "Percent.", Schema: &Schema{Type: "integer", Description: "0 to 100"}}
	if d := diff(want, light.Parameters[2]); d != "" {
		t.Errorf("set_light brightness:\n%s", d)
	}
	if r := light.Return; r == nil || r.Name != "state" || r.Schema.Ref != "#/schemas/LightState" {
		t.Errorf("set_light return = %+v", r)
	}
	target := doc.Function("set_climate").Parameters[1].Schema
	if d := diff([]any{json.Number("18"), json.Number("19.5"), json.Number("21"), json.Number("22.5")}, target.Enum); d != "" {
		t.Errorf("numbers must stay json.Number, as written:\n%s", d)
	}
	if rooms := doc.Function("list_rooms"); rooms.Parameters == nil || len(rooms.Parameters) != 0 {
		t.Errorf("list_rooms parameters = %#v, want empty and not nil", rooms.Parameters)
	}
	if len(doc.Schemas) != 5 || doc.Schemas["Condition"].Properties["children"].Items.Ref != "#/schemas/Condition" {
		t.Errorf("schemas = %v", doc.Schemas)
	}
}

// TestMarshal checks what readers rely on: "required": false and empty
// "parameters" and "functions" are written, optional fields are not.
func TestMarshal(t *testing.T) {
	doc := Document{
		OpenTool: "1.0.0",
		Info:     Info{Title: "t", Version: "1"},
		Functions: []Function{{
			Name: "f", Description: "d",
			Parameters: []Parameter{{Name: "p", Schema: &Schema{Type: "object", Properties: map[string]*Schema{}, Required: []string{}}}},
		}, {
			Name: "g", Description: "d",
		}},
	}
	got, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"opentool":"1.0.0","info":{"title":"t","version":"1"},"functions":[` +
		`{"name":"f","description":"d","parameters":[{"name":"p","schema":{"type":"object","properties":{},"required":[]},"required":false}]},` +
		`{"name":"g","description":"d","parameters":[]}]}`
	if string(got) != want {
		t.Errorf("Marshal =\n%s\nwant\n%s", got, want)
	}
	got, err = json.Marshal(&Document{})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"opentool":"","info":{"title":"","version":""},"functions":[]}`; string(got) != want {
		t.Errorf("Marshal(&Document{}) = %s, want %s", got, want)
	}
}

// TestParseLeniency covers where Parse accepts what the specification does
// not strictly allow.
func TestParseLeniency(t *testing.T) {
	doc, err := Parse([]byte(`{
		"opentool": "1.0", "info": {"title": "t", "version": "1", "description": null, "x-extra": 1},
		"server": null, "schemas": null, "x-vendor": {"deep": [1, 2]},
		"functions": [{"name": "f", "description": "d", "return": null, "unknown": true,
			"parameters": [
				{"name": "a", "schema": {"type": "object", "format": "ignored"}},
				{"name": "b", "schema": {"type": "string"}, "required": null},
				{"name": "c", "schema": {"type": "string"}, "required": false, "required": true}
			]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := &Document{
		OpenTool: "1.0",
		Info:     Info{Title: "t", Version: "1"},
		Functions: []Function{{Name: "f", Description: "d", Parameters: []Parameter{
			// An object without properties gets an empty map, written back as {}.
			{Name: "a", Schema: &Schema{Type: "object", Properties: map[string]*Schema{}}},
			// Absent or null "required": optional.
			{Name: "b", Schema: &Schema{Type: "string"}},
			// A repeated key keeps its last value.
			{Name: "c", Schema: &Schema{Type: "string"}, Required: true},
		}}},
	}
	if d := diff(want, doc); d != "" {
		t.Error(d)
	}
}

func TestParseErrors(t *testing.T) {
	// doc fills in a valid document around functions and schemas.
	doc := func(functions, schemas string) string {
		s := `{"opentool":"1.0.0","info":{"title":"t","version":"1"},"functions":` + functions
		if schemas != "" {
			s += `,"schemas":` + schemas
		}
		return s + "}"
	}
	// fn is a function named f with one parameter p of the given schema.
	fn := func(schema string) string {
		return `[{"name":"f","description":"d","parameters":[{"name":"p","schema":` + schema + `,"required":true}]}]`
	}
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"type typo deep", doc(`[{"name":"a","description":"d","parameters":[]},{"name":"b","description":"d","parameters":[]},
			{"name":"c","description":"d","parameters":[{"name":"p","schema":{"type":"array","items":{"type":"strin"}},"required":true}]}]`, ""),
			[]string{`functions[2].parameters[0].schema.items.type: "strin" is not one of boolean, integer, number, string, array, object`}},
		{"missing name", doc(`[{"description":"d","parameters":[]}]`, ""),
			[]string{`functions[0].name: missing (required)`}},
		{"empty name", doc(`[{"name":"","description":"d","parameters":[]}]`, ""),
			[]string{`functions[0].name: empty (required)`}},
		{"bad name", doc(`[{"name":"set light","description":"d","parameters":[]}]`, ""),
			[]string{`functions[0].name: "set light" does not match ^[a-zA-Z0-9_-]{1,64}$`}},
		{"long name", doc(`[{"name":"`+strings.Repeat("a", 65)+`","description":"d","parameters":[]}]`, ""),
			[]string{`functions[0].name: "` + strings.Repeat("a", 65) + `" does not match ^[a-zA-Z0-9_-]{1,64}$`}},
		{"duplicate function", doc(`[{"name":"f","description":"d","parameters":[]},{"name":"g","description":"d","parameters":[]},{"name":"f","description":"d","parameters":[]}]`, ""),
			[]string{`functions[2].name: "f" is already the name of functions[0]`}},
		{"blank description", doc(`[{"name":"f","description":" \n","parameters":[]}]`, ""),
			[]string{`functions[0].description: empty (required: a model decides from it when to call the function)`}},
		{"missing parameters", doc(`[{"name":"f","description":"d"}]`, ""),
			[]string{`functions[0].parameters: missing (required)`}},
		{"ref to nothing", doc(`[]`, `{"Point":{"type":"object","properties":{"x":{"$ref":"#/schemas/Nope"}}}}`),
			[]string{`schemas.Point.properties.x: $ref "#/schemas/Nope" names no schema`}},
		{"wrong JSON types keep their indexes", doc(`[{"name":"f","description":"d","parameters":[
			{"name":"a","schema":{"type":"string"},"required":true},
			{"name":"b","schema":{"type":"string"},"required":"yes"},
			{"name":7,"schema":{"type":"string","enum":"x"}},
			{"name":"d","schema":{"type":"object","properties":{"x":{"type":"string"}},"required":["x",3]}}]}]`, ""),
			[]string{
				`functions[0].parameters[1].required: want a boolean, got a string`,
				`functions[0].parameters[2].name: want a string, got a number`,
				`functions[0].parameters[2].schema.enum: want an array, got a string`,
				`functions[0].parameters[3].schema.required[1]: want a string, got a number`,
			}},
		{"a value of the wrong type is reported once", doc(`[{"name":"f","description":"d","parameters":[]}, "g", {"name":"h","description":"d","parameters":{}}]`, `{"A":[]}`),
			[]string{
				`functions[1]: want an object, got a string`,
				`functions[2].parameters: want an array, got an object`,
				`schemas.A: want an object, got an array`,
			}},
		{"parameters", doc(`[{"name":"f","description":"d","parameters":[
			{"schema":{"type":"string"}},{"name":"p","schema":{"type":"string"}},{"name":"p","schema":{"type":"string"}},{"name":"q"}]}]`, ""),
			[]string{
				`functions[0].parameters[0].name: missing (required)`,
				`functions[0].parameters[3].schema: missing (required)`,
				`functions[0].parameters[2].name: "p" is already the name of parameters[1]`,
			}},
		{"return", doc(`[{"name":"f","description":"d","parameters":[],"return":{"schema":{"type":"strin"}}},
			{"name":"g","description":"d","parameters":[],"return":{"name":"r"}}]`, ""),
			[]string{
				`functions[0].return.name: missing (required)`,
				`functions[1].return.schema: missing (required)`,
				`functions[0].return.schema.type: "strin" is not one of boolean, integer, number, string, array, object`,
			}},
		{"missing type", doc(fn(`{"description":"x"}`), ""),
			[]string{`functions[0].parameters[0].schema.type: missing (required unless the schema is a $ref)`}},
		{"type of the wrong JSON type", doc(fn(`{"type":["string","null"]}`), ""),
			[]string{`functions[0].parameters[0].schema.type: want a string, got an array`}},
		{"required names no property", doc(fn(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a","b"]}`), ""),
			[]string{`functions[0].parameters[0].schema.required[1]: "b" names no property`}},
		{"required without properties", doc(fn(`{"type":"object","required":["a"]}`), ""),
			[]string{`functions[0].parameters[0].schema.required[0]: "a" names no property`}},
		{"array without items", doc(fn(`{"type":"array"}`), ""),
			[]string{`functions[0].parameters[0].schema.items: missing (required when type is array)`}},
		{"keywords of another type", doc(fn(`{"type":"string","properties":{},"items":{"type":"string"},"required":[]}`), ""),
			[]string{
				`functions[0].parameters[0].schema.properties: only allowed when type is object, not string`,
				`functions[0].parameters[0].schema.required: only allowed when type is object, not string`,
				`functions[0].parameters[0].schema.items: only allowed when type is array, not string`,
			}},
		{"enum values of the wrong type", doc(`[{"name":"f","description":"d","parameters":[
			{"name":"s","schema":{"type":"string","enum":["a",1,null]},"required":true},
			{"name":"i","schema":{"type":"integer","enum":[1,1.0,1e2,1.5,"2",true]},"required":true},
			{"name":"n","schema":{"type":"number","enum":[1.5,-2,1e400]},"required":true},
			{"name":"b","schema":{"type":"boolean","enum":[true,"false"]},"required":true}]}]`, ""),
			[]string{
				`functions[0].parameters[0].schema.enum[1]: 1 is not a string`,
				`functions[0].parameters[0].schema.enum[2]: null is not a string`,
				`functions[0].parameters[1].schema.enum[3]: 1.5 is not an integer`,
				`functions[0].parameters[1].schema.enum[4]: "2" is not an integer`,
				`functions[0].parameters[1].schema.enum[5]: true is not an integer`,
				`functions[0].parameters[2].schema.enum[2]: 1e400 is out of range`,
				`functions[0].parameters[3].schema.enum[1]: "false" is not a boolean`,
			}},
		{"enum on a structured type", doc(fn(`{"type":"array","items":{"type":"string"},"enum":[["a"]]}`), ""),
			[]string{`functions[0].parameters[0].schema.enum: only allowed for boolean, integer, number and string, not array`}},
		{"empty enum", doc(fn(`{"type":"string","enum":[]}`), ""),
			[]string{`functions[0].parameters[0].schema.enum: empty (no value could be given; leave enum out instead)`}},
		{"ref with siblings", doc(fn(`{"$ref":"#/schemas/A","type":"object","enum":["x"]}`), `{"A":{"type":"string"}}`),
			[]string{`functions[0].parameters[0].schema: a $ref schema may only have a description besides, not type, enum`}},
		{"ref of another form", doc(fn(`{"$ref":"#/definitions/A"}`), `{"A":{"type":"string"}}`),
			[]string{`functions[0].parameters[0].schema: $ref "#/definitions/A" is not of the form "#/schemas/<name>"`}},
		{"ref loop", doc(fn(`{"$ref":"#/schemas/A"}`), `{"A":{"$ref":"#/schemas/B"},"B":{"$ref":"#/schemas/A"},"C":{"$ref":"#/schemas/C"},"D":{"$ref":"#/schemas/A"}}`),
			[]string{
				`schemas.A: $ref chain A -> B -> A never reaches a type`,
				`schemas.B: $ref chain B -> A -> B never reaches a type`,
				`schemas.C: $ref chain C -> C never reaches a type`,
				`schemas.D: $ref chain D -> A -> B -> A never reaches a type`,
			}},
		{"bad schema names", doc(`[]`, `{"a b":{"type":"string"},"x/y":{"type":"string"},"":{"type":"string"}}`),
			[]string{
				`schemas[""]: the name "" does not match ^[a-zA-Z0-9_.-]{1,64}$ (it is used in references)`,
				`schemas["a b"]: the name "a b" does not match ^[a-zA-Z0-9_.-]{1,64}$ (it is used in references)`,
				`schemas["x/y"]: the name "x/y" does not match ^[a-zA-Z0-9_.-]{1,64}$ (it is used in references)`,
			}},
		{"odd property names are quoted", doc(`[]`, `{"A":{"type":"object","properties":{"a.b":{"type":"strin"},"":{}}}}`),
			[]string{
				`schemas.A.properties[""].type: missing (required unless the schema is a $ref)`,
				`schemas.A.properties["a.b"].type: "strin" is not one of boolean, integer, number, string, array, object`,
			}},
		{"header", `{"opentool":"2.0.0","info":{"title":"","version":1},"functions":[]}`,
			[]string{
				`info.version: want a string, got a number`,
				`opentool: "2.0.0" is not a version this package reads ("1.x" or "1.x.y")`,
				`info.title: empty (required)`,
			}},
		{"missing header", `{"functions":{}}`,
			[]string{
				`opentool: missing (required)`,
				`info: missing (required)`,
				`functions: want an array, got an object`,
			}},
		{"missing functions", `{"opentool":"1.0","info":{"title":"t","version":"1"}}`,
			[]string{`functions: missing (required)`}},
		{"server without url", `{"opentool":"1.1","info":{"title":"t","version":"1"},"server":{"description":"x"},"functions":[]}`,
			[]string{`server.url: missing (required)`}},
		{"relative server url", `{"opentool":"1.1","info":{"title":"t","version":"1"},"server":{"url":"/opentool"},"functions":[]}`,
			[]string{`server.url: "/opentool" is not an absolute http or https URL`}},
		{"ftp server url", `{"opentool":"1.1","info":{"title":"t","version":"1"},"server":{"url":"ftp://example.com/"},"functions":[]}`,
			[]string{`server.url: "ftp://example.com/" is not an absolute http or https URL`}},
		{"server url without host", `{"opentool":"1.1","info":{"title":"t","version":"1"},"server":{"url":"https:///x"},"functions":[]}`,
			[]string{`server.url: "https:///x" has no host`}},
		{"server url that does not parse", `{"opentool":"1.1","info":{"title":"t","version":"1"},"server":{"url":"http://[::1"},"functions":[]}`,
			[]string{`server.url: "http://[::1" is not a URL: missing ']' in host`}},
		{"not an object", `[]`, []string{`want an object, got an array`}},
		{"empty", ``, []string{`not valid JSON: the document is empty`}},
		{"truncated", `{"opentool":`, []string{`not valid JSON: the document ends early`}},
		{"syntax", "{\n  \"opentool\": \"1.0\",\n  \"info\" {}\n}", []string{`not valid JSON: invalid character '{' after object key at line 3, column 10`}},
		{"trailing data", `{"opentool":"1.0","info":{"title":"t","version":"1"},"functions":[]} {}`,
			[]string{`not valid JSON: data after the document at line 1, column 70`}},
		{"too deep", strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1),
			[]string{`document nests arrays and objects more than 64 levels deep`}},
		{"byte order mark", "\xef\xbb\xbf" + doc(`[]`, ""), nil},
		{"brackets in strings do not count", doc(`[]`, `{"A":{"type":"string","description":"`+strings.Repeat(`[{\"`, 100)+`"}}`), nil},
		{"too big", `{"opentool":"` + strings.Repeat(" ", MaxSize) + `"}`,
			[]string{fmt.Sprintf("document is %d bytes, more than the limit of 1048576 (1 MiB)", MaxSize+15)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := Parse([]byte(tt.in))
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Parse = %+v, nil; want errors", doc)
			}
			if doc != nil {
				t.Errorf("Parse returned a document with an error")
			}
			if got, want := err.Error(), strings.Join(tt.want, "\n"); got != want {
				t.Errorf("Parse error:\n%s\nwant:\n%s", got, want)
			}
			var pe *PathError
			if !errors.As(err, &pe) {
				t.Errorf("error is not a *PathError")
			}
		})
	}
}

func TestParseManyProblems(t *testing.T) {
	var fs []string
	for i := range 25 {
		fs = append(fs, fmt.Sprintf(`{"name":"bad name %d","description":"d","parameters":[]}`, i))
	}
	_, err := Parse([]byte(`{"opentool":"1.0","info":{"title":"t","version":"1"},"functions":[` + strings.Join(fs, ",") + `]}`))
	if err == nil {
		t.Fatal("Parse accepted 25 bad names")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 21 || lines[20] != "and 5 more problems" {
		t.Errorf("got %d lines, ending %q; want 20 problems and %q", len(lines), lines[len(lines)-1], "and 5 more problems")
	}
	// errors.Join keeps the problems apart for callers that want them.
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) {
		t.Fatal("error does not unwrap to a list")
	}
	var pe *PathError
	if errs := joined.Unwrap(); len(errs) != 21 || !errors.As(errs[3], &pe) || pe.Path != "functions[3].name" {
		t.Errorf("problem 3 = %v, want a *PathError at functions[3].name", errs[3])
	}
}

func TestValidate(t *testing.T) {
	doc := readSmartHome(t)
	if err := doc.Validate(); err != nil {
		t.Fatalf("Validate(smarthome) = %v", err)
	}
	// Documents built in Go: nil where Parse would have reported a missing
	// value, Go numbers in enums, schemas that point back at themselves.
	loop := &Schema{Type: "array"}
	loop.Items = loop
	bad := &Document{
		OpenTool: "1.0",
		Info:     Info{Title: "t", Version: "1"},
		Functions: []Function{{Name: "f", Description: "d", Parameters: []Parameter{
			{Name: "a", Schema: &Schema{Type: "integer", Enum: []any{1, int64(2), uint8(3), 4.0}}},
			{Name: "b", Schema: &Schema{Type: "number", Enum: []any{float32(1.5), 2}}},
			{Name: "c", Schema: &Schema{Type: "integer", Enum: []any{2.5}}},
			{Name: "d"},
			{Name: "e", Schema: &Schema{Type: "object", Properties: map[string]*Schema{"x": nil}}},
			{Name: "g", Schema: loop},
		}}},
		Schemas: map[string]*Schema{"A": nil},
	}
	want := []string{
		`functions[0].parameters[2].schema.enum[0]: 2.5 is not an integer`,
		`functions[0].parameters[3].schema: missing (required)`,
		`functions[0].parameters[4].schema.properties.x: missing (required)`,
		`functions[0].parameters[5].schema` + strings.Repeat(".items", maxSchemaDepth) + `: schemas nest more than 100 levels deep`,
		`schemas.A: missing (required)`,
	}
	err := bad.Validate()
	if err == nil {
		t.Fatal("Validate accepted a bad document")
	}
	if got := err.Error(); got != strings.Join(want, "\n") {
		t.Errorf("Validate:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

func TestDiff(t *testing.T) {
	a := &Document{Functions: []Function{{Name: "f", Parameters: []Parameter{{Name: "p"}}}}, Schemas: map[string]*Schema{"A": {}}}
	b := &Document{Functions: []Function{{Name: "g", Parameters: []Parameter{}}}, Schemas: map[string]*Schema{"B": {}}}
	want := strings.Join([]string{
		`.Functions[0].Name: want "f", got "g"`,
		`.Functions[0].Parameters[0]: missing, want opentool.Parameter{Name:"p", Description:"", Schema:(*opentool.Schema)(nil), Required:false}`,
		`.Schemas["A"]: missing, want opentool.Schema{Ref:"", Type:"", Description:"", Properties:map[string]*opentool.Schema(nil), Items:(*opentool.Schema)(nil), Enum:[]interface {}(nil), Required:[]string(nil)}`,
		`.Schemas["B"]: extra opentool.Schema{Ref:"", Type:"", Description:"", Properties:map[string]*opentool.Schema(nil), Items:(*opentool.Schema)(nil), Enum:[]interface {}(nil), Required:[]string(nil)}`,
	}, "\n")
	if got := diff(a, b); got != want {
		t.Errorf("diff =\n%s\nwant\n%s", got, want)
	}
	if got := diff(a, a); got != "" {
		t.Errorf("diff(a, a) = %s", got)
	}
	if got := diff([]string{}, []string(nil)); got != "(top): want []string{}, got nil" {
		t.Errorf("diff(empty, nil) = %s", got)
	}
}

// TestParseLarge guards against costs that grow faster than the document:
// checking every problem against every earlier one, or spelling out every
// long chain of references, took minutes for documents well under
// MaxSize.
func TestParseLarge(t *testing.T) {
	const n = 20000
	var schemas []string
	for i := range n {
		schemas = append(schemas, fmt.Sprintf(`"A%d":{"$ref":"#/schemas/A%d"}`, i, (i+1)%n))
	}
	tests := []struct {
		name string
		in   string
		last string // the last line of the error
	}{
		{"many values of the wrong type", `{"opentool":"1.0","info":{"title":"t","version":"1"},"functions":[` + strings.Repeat("1,", 5*n) + `1]}`,
			// The checks after decoding are skipped.
			"and at least 99981 more problems"},
		{"many empty functions", `{"opentool":"1.0","info":{"title":"t","version":"1"},"functions":[` + strings.Repeat("{},", n) + `{}]}`,
			"and at least 59983 more problems"},
		{"many invalid names", `{"opentool":"1.0","info":{"title":"t","version":"1"},"functions":[` +
			strings.Repeat(`{"name":"a b","description":"d","parameters":[]},`, n) + `{"name":"a b","description":"d","parameters":[]}]}`,
			"and 39981 more problems"},
		{"a long loop of references", `{"opentool":"1.0","info":{"title":"t","version":"1"},"functions":[],"schemas":{` + strings.Join(schemas, ",") + `}}`,
			"and 19980 more problems"},
	}
	for _, tt := range tests {
		start := time.Now()
		_, err := Parse([]byte(tt.in))
		if elapsed := time.Since(start); elapsed > 10*time.Second {
			t.Errorf("%s: Parse took %v", tt.name, elapsed)
		}
		if err == nil {
			t.Fatalf("%s: Parse accepted it", tt.name)
		}
		lines := strings.Split(err.Error(), "\n")
		if len(lines) != 21 || lines[20] != tt.last {
			t.Errorf("%s: %d lines, the last %q; want 21, the last %q", tt.name, len(lines), lines[len(lines)-1], tt.last)
		}
	}
	_, err := Parse([]byte(tests[3].in))
	if first := strings.Split(err.Error(), "\n")[0]; first != "schemas.A0: $ref chain A0 -> A1 -> A2 -> A3 -> A4 -> A5 -> A6 -> A7 -> ... never reaches a type" {
		t.Errorf("first problem = %s", first)
	}
}
