package opentool

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/tools"
)

func nop(context.Context, json.RawMessage) (any, error) { return "ok", nil }

// smartHomeRegistry registers every function of the smart-home document.
func smartHomeRegistry(t *testing.T) (*Document, *tools.Registry) {
	t.Helper()
	doc := readSmartHome(t)
	r := tools.NewRegistry()
	for i := range doc.Functions {
		decl, err := doc.Declaration(&doc.Functions[i], tools.Control)
		if err != nil {
			t.Fatalf("Declaration(%s): %v", doc.Functions[i].Name, err)
		}
		if err := r.Add(&tools.Tool{Declaration: decl, Handler: nop}); err != nil {
			t.Fatalf("Registry.Add(%s): %v", decl.Name, err)
		}
	}
	return doc, r
}

func TestDeclarationRegistry(t *testing.T) {
	_, r := smartHomeRegistry(t)
	tests := []struct {
		tool, input string
		want        string // a part of the *ParamsError details; "" for valid input
	}{
		{"set_light", `{"room":"kitchen","on":true}`, ""},
		{"set_light", `{"room":"kitchen","on":true,"brightness":40,"colour":{"r":1,"g":2,"b":3}}`, ""},
		{"set_light", `{"room":"garage","on":true}`, `tool_input.room: "garage" is not one of`},
		{"set_light", `{"room":"kitchen"}`, `missing required property "on"`},
		{"set_light", `{"room":"kitchen","on":true,"brightness":40.5}`, `tool_input.brightness`},
		{"set_light", `{"room":"kitchen","on":true,"colour":{"r":1,"g":2}}`, `missing required property "b"`},
		{"set_scene", `{"lights":[{"room":"bedroom","brightness":25},{"room":"kitchen"}]}`, ""},
		{"set_scene", `{"lights":[{"room":"bedroom"},{"room":"hall"}]}`, `tool_input.lights[1].room`},
		{"set_scene", `{"lights":[{"room":"bedroom","brightness":30}]}`, `tool_input.lights[0].brightness`},
		{"set_scene", `{"lights":[],"schedule":{"repeat":"daily","days":[1,7]}}`, ""},
		{"set_scene", `{"lights":[],"schedule":{"days":[8]}}`, `tool_input.schedule.days[0]`},
		{"set_climate", `{"room":"bathroom","target":19.5}`, ""},
		{"set_climate", `{"room":"bathroom","target":20}`, `tool_input.target`},
		{"set_climate", `{"room":"bathroom","target":21.0,"eco":false}`, ""},
		{"create_automation", `{"name":"n","then":["set_light"],"when":{"op":"all","children":[{"op":"any","children":[{"op":"above","sensor":"t","value":25}]}]}}`, ""},
		{"create_automation", `{"name":"n","then":[],"when":{"op":"all","children":[{"op":"any","children":[{"sensor":"t"}]}]}}`, `missing required property "op"`},
		{"create_automation", `{"name":"n","then":[],"when":{"op":"all"},"meta":{"anything":[1]}}`, ""},
		{"list_rooms", `{}`, ""},
	}
	for _, tt := range tests {
		_, err := r.Validate(tt.tool, json.RawMessage(tt.input))
		var pe *tools.ParamsError
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("Validate(%s, %s) = %v, want success", tt.tool, tt.input, err)
		case tt.want == "":
		case !errors.As(err, &pe):
			t.Errorf("Validate(%s, %s) = %v, want a *ParamsError containing %q", tt.tool, tt.input, err, tt.want)
		case !strings.Contains(pe.Details, tt.want):
			t.Errorf("Validate(%s, %s) = %q, want it to contain %q", tt.tool, tt.input, pe.Details, tt.want)
		}
	}
}

// TestDeclarationJSON pins what the server receives for one function.
func TestDeclarationJSON(t *testing.T) {
	doc, err := Parse([]byte(`{"opentool":"1.0.0","info":{"title":"t","version":"1"},
		"functions":[{"name":"draw","description":"Draw a shape.","return":{"name":"ok","schema":{"type":"boolean"}},"parameters":[
			{"name":"shape","description":"What to draw.","schema":{"$ref":"#/schemas/Shape"},"required":true},
			{"name":"count","schema":{"type":"integer","enum":[1,2,3]},"required":false}]}],
		"schemas":{
			"Shape":{"type":"object","properties":{"kind":{"type":"string","enum":["dot","group"]},"parts":{"type":"array","items":{"$ref":"#/schemas/Shape"}},"at":{"$ref":"#/schemas/Point"}},"required":["kind"]},
			"Point":{"type":"object","description":"x, y","properties":{"x":{"type":"number"},"y":{"type":"number"}}},
			"Unused":{"type":"string"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	decl, err := doc.Declaration(&doc.Functions[0], tools.Query)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(decl)
	if err != nil {
		t.Fatal(err)
	}
	// Properties in parameter order, only the reachable schemas, no return.
	want := `{"name":"draw","description":"Draw a shape.","main_type":"remote","sub_type":"query","parameters":{` +
		`"type":"object","properties":{"shape":{"$ref":"#/$defs/Shape","description":"What to draw."},"count":{"type":"integer","enum":[1,2,3]}},` +
		`"$defs":{"Point":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},"description":"x, y"},` +
		`"Shape":{"type":"object","properties":{"at":{"$ref":"#/$defs/Point"},"kind":{"type":"string","enum":["dot","group"]},"parts":{"type":"array","items":{"$ref":"#/$defs/Shape"}}},"required":["kind"]}},` +
		`"required":["shape"]}}`
	if string(got) != want {
		t.Errorf("declaration =\n%s\nwant\n%s", got, want)
	}
}

// TestDescriptionRule checks the four combinations of a parameter's and
// its schema's description: what the property says, that the registry
// accepts the extension keyword, and that FunctionFromDeclaration restores
// both.
func TestDescriptionRule(t *testing.T) {
	tests := []struct {
		param, schema string
		want          string // the property's JSON
	}{
		{"", "", `{"type":"string"}`},
		{"the lamp", "", `{"type":"string","description":"the lamp"}`},
		{"", "a lamp id", `{"type":"string","description":"a lamp id","x-opentool-schema-description":true}`},
		{"the lamp", "a lamp id", `{"type":"string","description":"the lamp","x-opentool-schema-description":"a lamp id"}`},
		// The same text twice is still two descriptions.
		{"lamp", "lamp", `{"type":"string","description":"lamp","x-opentool-schema-description":"lamp"}`},
	}
	for _, tt := range tests {
		f := Function{Name: "f", Description: "d", Parameters: []Parameter{
			{Name: "p", Description: tt.param, Schema: &Schema{Type: "string", Description: tt.schema}, Required: true},
		}}
		doc := &Document{}
		decl, err := doc.Declaration(&f, tools.Control)
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(decl.Parameters.Properties["p"])
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tt.want {
			t.Errorf("param %q, schema %q: property = %s, want %s", tt.param, tt.schema, got, tt.want)
		}
		r := tools.NewRegistry()
		if err := r.Add(&tools.Tool{Declaration: decl, Handler: nop}); err != nil {
			t.Fatalf("Registry.Add: %v", err)
		}
		back, _, err := FunctionFromDeclaration(r.Declarations()[0])
		if err != nil {
			t.Fatal(err)
		}
		if d := diff(f, back); d != "" {
			t.Errorf("param %q, schema %q: round trip:\n%s", tt.param, tt.schema, d)
		}
	}
}

func TestDeclarationErrors(t *testing.T) {
	doc := &Document{Schemas: map[string]*Schema{
		"A": {Ref: "#/schemas/A"},
		"B": {Type: "string"},
	}}
	tests := []struct {
		name string
		f    *Function
		want string
	}{
		{"nil", nil, "opentool: Declaration(nil)"},
		{"problems of the function", &Function{Name: "f g", Parameters: []Parameter{{Name: "p"}, {Name: "q", Schema: &Schema{Ref: "#/schemas/C"}}}},
			"opentool: function \"f g\": name: \"f g\" does not match ^[a-zA-Z0-9_-]{1,64}$\n" +
				"description: empty (required: a model decides from it when to call the function)\n" +
				"parameters[0].schema: missing (required)\n" +
				"parameters[1].schema: $ref \"#/schemas/C\" names no schema\n" +
				"schemas.A: $ref chain A -> A never reaches a type"},
	}
	for _, tt := range tests {
		_, err := doc.Declaration(tt.f, tools.Control)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: Declaration error:\n%v\nwant:\n%s", tt.name, err, tt.want)
		}
	}
	// A function without references needs no document.
	var none *Document
	decl, err := none.Declaration(&Function{Name: "f", Description: "d", Parameters: []Parameter{}}, tools.Control)
	if err != nil || decl.Parameters.Properties == nil || decl.Parameters.Defs != nil {
		t.Errorf("nil document: %+v, %v", decl.Parameters, err)
	}
}
