package opentool

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/devicectl/devicectl/tools"
	"github.com/google/jsonschema-go/jsonschema"
)

// FuzzParse feeds arbitrary bytes to Parse. Whatever arrives, Parse must
// not panic; an error must be a readable list of problems; and a document
// it accepts must
//
//   - marshal, and parse back to an equal document;
//   - convert, function by function, to declarations that
//     tools.Registry.Add accepts;
//   - convert back from those declarations to the same functions, but for
//     the return value and the spelling of numbers (1e2 comes back as 100).
//
// The seed corpus is in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	smarthome, err := os.ReadFile("testdata/smarthome.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(smarthome)
	f.Add([]byte(`{"opentool":"1.0","info":{"title":"t","version":"1"},"functions":[]}`))
	f.Add([]byte(`{"opentool":"1.0","info":{"title":"t","version":"1"},"functions":[{"name":"f","description":"d","parameters":[{"name":"p","schema":{"type":"integer","enum":[1e2,-0,3]}}]}]}`))
	f.Add([]byte(`{"opentool":"1.0","info":{"title":"t","version":"1"},"functions":[{"name":"f","description":"d","parameters":[{"name":"p","schema":{"$ref":"#/schemas/A"}}]}],"schemas":{"A":{"$ref":"#/schemas/B"},"B":{"type":"array","items":{"$ref":"#/schemas/A"}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := Parse(data)
		if err != nil {
			if doc != nil {
				t.Fatalf("Parse returned a document and an error: %v", err)
			}
			for _, line := range strings.Split(err.Error(), "\n") {
				if line == "" || !utf8.ValidString(line) {
					t.Fatalf("Parse error has a bad line %q in:\n%v", line, err)
				}
			}
			return
		}
		out, err := json.Marshal(doc)
		if err != nil {
			t.Fatalf("Marshal of a parsed document: %v", err)
		}
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse of a marshalled document: %v\n%s", err, out)
		}
		if d := diff(doc, again); d != "" {
			t.Fatalf("marshal and parse changed the document:\n%s", d)
		}
		r := tools.NewRegistry()
		for i := range doc.Functions {
			fn := &doc.Functions[i]
			decl, err := doc.Declaration(fn, tools.Query)
			if err != nil {
				t.Fatalf("Declaration(%s): %v", fn.Name, err)
			}
			if err := r.Add(&tools.Tool{Declaration: decl, Handler: nop}); err != nil {
				t.Fatalf("Registry.Add refused the declaration of %s: %v", fn.Name, err)
			}
			back, schemas, err := FunctionFromDeclaration(decl)
			if err != nil {
				t.Fatalf("FunctionFromDeclaration(%s): %v", fn.Name, err)
			}
			want := canonicalFunction(fn)
			if d := diff(want, back); d != "" {
				t.Fatalf("%s did not survive the round trip:\n%s", fn.Name, d)
			}
			for name, s := range schemas {
				if d := diff(canonical(doc.Schemas[name]), s); d != "" {
					t.Fatalf("%s: schema %s did not survive the round trip:\n%s", fn.Name, name, d)
				}
			}
		}
	})
}

// canonicalFunction copies f without its return value and with numbers
// spelt as a round trip through a declaration spells them.
func canonicalFunction(f *Function) Function {
	c := Function{Name: f.Name, Description: f.Description, Parameters: make([]Parameter, len(f.Parameters))}
	for i, p := range f.Parameters {
		p.Schema = canonical(p.Schema)
		c.Parameters[i] = p
	}
	return c
}

func canonical(s *Schema) *Schema {
	if s == nil {
		return nil
	}
	c := *s
	if s.Properties != nil {
		c.Properties = make(map[string]*Schema, len(s.Properties))
		for k, p := range s.Properties {
			c.Properties[k] = canonical(p)
		}
	}
	c.Items = canonical(s.Items)
	if s.Enum != nil {
		c.Enum = make([]any, len(s.Enum))
		for i, v := range s.Enum {
			c.Enum[i] = toEnumValue(enumValue(v))
		}
	}
	return &c
}

// FuzzFunctionFromDeclaration feeds arbitrary parameter schemas to
// FunctionFromDeclaration, as the device's own tools could have. It must
// not panic, and a function it returns must be valid OpenTool (it checks
// that itself) whose declaration tools.Registry.Add accepts.
func FuzzFunctionFromDeclaration(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"level":{"type":"integer","minimum":0,"maximum":100,"description":"Volume"}},"required":["level"],"additionalProperties":false}`))
	f.Add([]byte(`{"type":"object","properties":{"c":{"type":["null","string"],"enum":["red",null]},"t":{"type":["null","array"],"items":{"type":"string"}}}}`))
	f.Add([]byte(`{"type":"object","properties":{"n":{"$ref":"#/$defs/Node"}},"$defs":{"Node":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/Node"}}}}}}`))
	f.Add([]byte(`{"type":"object","properties":{"p":{"$ref":"#/definitions/P","description":"d","x-opentool-schema-description":true}},"definitions":{"P":{"const":3}}}`))
	f.Add([]byte(`{"type":"object","properties":{"p":{"anyOf":[{"type":"string"}],"default":[1,2]}}}`))
	f.Fuzz(func(t *testing.T, params []byte) {
		var s jsonschema.Schema
		if err := json.Unmarshal(params, &s); err != nil {
			return
		}
		fn, schemas, err := FunctionFromDeclaration(tools.Declaration{Name: "f", Description: "d", Parameters: &s})
		if err != nil {
			if !utf8.ValidString(err.Error()) {
				t.Fatalf("error is not UTF-8: %q", err)
			}
			return
		}
		doc := &Document{Schemas: schemas}
		decl, err := doc.Declaration(&fn, tools.Control)
		if err != nil {
			t.Fatalf("Declaration of a converted function: %v", err)
		}
		if err := tools.NewRegistry().Add(&tools.Tool{Declaration: decl, Handler: nop}); err != nil {
			t.Fatalf("Registry.Add refused a converted function: %v", err)
		}
	})
}
