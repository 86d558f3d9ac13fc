package tools

import (
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// findSchemas use every keyword find follows, several in one schema.
var findSchemas = []string{
	`{"type":"object","properties":{"n":{"type":["integer","null"],"minimum":-3,"exclusiveMaximum":10,"multipleOf":0.5},
	  "s":{"type":"string","minLength":1,"maxLength":4,"pattern":"^[a-z]+$"},"e":{"enum":[1,"a",null,[1],{"k":true}]},"c":{"const":{"a":[1,2.0]}},
	  "a":{"type":"array","prefixItems":[{"type":"string"}],"items":{"type":"number"},"minItems":1,"maxItems":4,"uniqueItems":true,
	       "contains":{"minimum":5},"maxContains":2},
	  "m":{"anyOf":[{"type":"integer"},{"const":"auto"}]},"o":{"oneOf":[{"type":"integer"},{"minimum":0}]},"x":{"not":{"type":"boolean"}},
	  "p":{"$ref":"#/$defs/p"}},
	  "patternProperties":{"^x-":{"type":"string"}},"propertyNames":{"maxLength":5},"minProperties":1,"maxProperties":6,
	  "required":["n"],"dependentRequired":{"s":["e"]},"dependentSchemas":{"c":{"required":["m"]}},
	  "if":{"properties":{"n":{"const":1}}},"then":{"required":["s"]},"else":{"properties":{"s":{"maxLength":2}}},
	  "$defs":{"p":{"type":"object","properties":{"q":{"$ref":"#/$defs/p"},"v":{"type":"integer"}},"additionalProperties":false}}}`,
	`{"type":"object","allOf":[{"properties":{"a":{"type":"integer"}}}],"anyOf":[{"properties":{"b":{}}},{"properties":{"c":{}}}],
	  "unevaluatedProperties":{"type":"string"},
	  "properties":{"u":{"prefixItems":[{"type":"integer"}],"allOf":[{"contains":{"type":"string"}}],
	    "anyOf":[{"prefixItems":[{},{"type":"boolean"}]},{"items":{"type":"array"}},{}],"unevaluatedItems":{"type":"null"}}}}`,
	`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"t":{"items":[{"type":"integer"}],"additionalItems":{"type":"string"}},
	  "r":{"$ref":"#/definitions/r","maxLength":1}},"dependencies":{"t":["r"],"r":{"required":["z"]}},"definitions":{"r":{"type":"string"}}}`,
}

// FuzzFind: find finds a failure exactly when jsonschema-go refuses the input, so that every
// refusal is worded from the walk.
func FuzzFind(f *testing.F) {
	for _, s := range []string{`{"n":1,"s":"ab","e":1}`, `{"n":null,"a":["x",5,6]}`, `{"p":{"q":{"v":1}}}`, `{"a":1,"b":"x","z":2}`,
		`{"t":[1,"a"],"r":"s","z":1}`, `{"o":1.5,"m":"auto","x":1,"x-y":"z"}`, `{"n":2,"c":{"a":[1,2]},"m":1}`,
		`{"u":[1,true,"s",null]}`, `{"u":[1,2]}`, `{"u":[[1],[2]]}`} {
		f.Add([]byte(s))
	}
	var ps []*parameters
	for _, src := range findSchemas {
		var s jsonschema.Schema
		if err := json.Unmarshal([]byte(src), &s); err != nil {
			f.Fatal(err)
		}
		p, err := resolve(&s)
		if err != nil {
			f.Fatal(err)
		}
		ps = append(ps, p)
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		instance, err := decodeInstance(input)
		if err != nil {
			return
		}
		for i, p := range ps {
			fd := finder{parameters: p}
			e := fd.find(p.Schema(), instance, nil)
			if verr := p.Validate(instance); (e == nil) != (verr == nil) {
				t.Errorf("schema %d, input %s: find %+v, jsonschema-go %v", i, input, e, verr)
			}
		}
	})
}
