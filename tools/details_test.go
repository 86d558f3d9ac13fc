package tools_test

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/tools"
	"github.com/google/jsonschema-go/jsonschema"
)

var update = flag.Bool("update", false, "rewrite testdata/details.golden")

// detailsCases are schemas and inputs they refuse, a few per keyword, for
// TestDetailsGolden.
var detailsCases = []struct{ name, schema, input string }{
	{"type", `{"type":"object","properties":{"n":{"type":"integer"}}}`, `{"n":"7"}`},
	{"type-fraction", `{"type":"object","properties":{"n":{"type":"integer"}}}`, `{"n":7.5}`},
	{"type-null", `{"type":"object","properties":{"n":{"type":"integer"}}}`, `{"n":null}`},
	{"type-list", `{"type":"object","properties":{"n":{"type":["string","null"]}}}`, `{"n":[1]}`},
	{"type-root", `{"type":"object"}`, `[1,2]`},
	{"enum", `{"type":"object","properties":{"e":{"enum":["a","b"]}}}`, `{"e":"c"}`},
	{"enum-mixed", `{"type":"object","properties":{"e":{"enum":[1,"two",null,true]}}}`, `{"e":1.5}`},
	{"const", `{"type":"object","properties":{"c":{"const":"on"}}}`, `{"c":"off"}`},
	{"const-object", `{"type":"object","properties":{"c":{"const":{"a":1}}}}`, `{"c":{"a":2}}`},
	{"minimum", `{"type":"object","properties":{"n":{"type":"number","minimum":-1.5}}}`, `{"n":-2}`},
	{"maximum", `{"type":"object","properties":{"level":{"type":"integer","maximum":100}}}`, `{"level":150}`},
	{"maximum-huge", `{"type":"object","properties":{"n":{"type":"integer","maximum":9007199254740992}}}`, `{"n":9007199254740993}`},
	{"exclusiveMinimum", `{"type":"object","properties":{"n":{"exclusiveMinimum":0}}}`, `{"n":0}`},
	{"exclusiveMaximum", `{"type":"object","properties":{"n":{"exclusiveMaximum":1}}}`, `{"n":1.0}`},
	{"multipleOf", `{"type":"object","properties":{"n":{"multipleOf":0.5}}}`, `{"n":0.3}`},
	{"minLength", `{"type":"object","properties":{"s":{"minLength":2}}}`, `{"s":"é"}`},
	{"maxLength", `{"type":"object","properties":{"s":{"maxLength":2}}}`, `{"s":"abc"}`},
	{"pattern", `{"type":"object","properties":{"rgb":{"type":"string","pattern":"^#[0-9a-f]{6}$"}}}`, `{"rgb":"red"}`},
	{"required", `{"type":"object","properties":{"level":{"type":"integer"}},"required":["level"]}`, `{}`},
	{"required-many", `{"type":"object","required":["a","b","c"]}`, `{"b":1}`},
	{"additionalProperties-false", `{"type":"object","properties":{"level":{}},"additionalProperties":false}`, `{"volume":80}`},
	{"additionalProperties-none", `{"type":"object","properties":{},"additionalProperties":false}`, `{"b":1,"a":2}`},
	{"additionalProperties-many", `{"type":"object","additionalProperties":false}`, `{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6}`},
	{"additionalProperties-pattern", `{"type":"object","patternProperties":{"^x-":{}},"additionalProperties":false}`, `{"x-a":1,"y":2}`},
	{"additionalProperties-schema", `{"type":"object","additionalProperties":{"type":"number"}}`, `{"a":1,"b c":"x"}`},
	{"patternProperties", `{"type":"object","patternProperties":{"^x-":{"type":"string"}}}`, `{"x-1":"a","x-2":2}`},
	{"properties-false", `{"type":"object","properties":{"old":false}}`, `{"old":1}`},
	{"propertyNames", `{"type":"object","propertyNames":{"maxLength":3}}`, `{"abc":1,"abcd":2}`},
	{"minProperties", `{"type":"object","minProperties":2}`, `{"a":1}`},
	{"maxProperties", `{"type":"object","maxProperties":1}`, `{"a":1,"b":2}`},
	{"dependentRequired", `{"type":"object","dependentRequired":{"card":["cvc","expiry"]}}`, `{"card":"1"}`},
	{"dependentSchemas", `{"type":"object","dependentSchemas":{"card":{"properties":{"cvc":{"type":"integer"}}}}}`, `{"card":"1","cvc":"x"}`},
	{"items", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"string"}}}}`, `{"a":["x",2]}`},
	{"items-nested", `{"type":"object","properties":{"leds":{"type":"array","items":{"type":"object","properties":{"rgb":{"pattern":"^#"}},"required":["rgb"]}}}}`, `{"leds":[{"rgb":"#0"},{"on":true}]}`},
	{"prefixItems", `{"type":"object","properties":{"p":{"prefixItems":[{"type":"number"},{"type":"string"}],"items":false}}}`, `{"p":[1,"a",true]}`},
	{"minItems", `{"type":"object","properties":{"a":{"minItems":2}}}`, `{"a":[1]}`},
	{"minItems-none", `{"type":"object","properties":{"a":{"minItems":2}}}`, `{"a":[]}`},
	{"maxItems", `{"type":"object","properties":{"a":{"maxItems":1}}}`, `{"a":[1,2]}`},
	{"uniqueItems", `{"type":"object","properties":{"a":{"uniqueItems":true}}}`, `{"a":[1,{"x":[2]},3,{"x":[2.0]}]}`},
	{"contains", `{"type":"object","properties":{"a":{"contains":{"type":"string"}}}}`, `{"a":[1,2]}`},
	{"minContains", `{"type":"object","properties":{"a":{"contains":{"type":"string"},"minContains":2}}}`, `{"a":["x",2]}`},
	{"maxContains", `{"type":"object","properties":{"a":{"contains":{"type":"string"},"maxContains":1}}}`, `{"a":["x","y"]}`},
	{"ref", `{"type":"object","properties":{"pos":{"$ref":"#/$defs/point"}},"$defs":{"point":{"properties":{"x":{"maximum":10}}}}}`, `{"pos":{"x":11}}`},
	{"ref-recursive", `{"type":"object","properties":{"value":{"type":"integer"},"children":{"type":"array","items":{"$ref":"#"}}}}`, `{"children":[{"value":1},{"children":[{"value":"x"}]}]}`},
	{"ref-with-id", `{"type":"object","properties":{"id":{"$id":"https://example.com/id","type":"integer"}}}`, `{"id":"abc"}`},
	{"allOf", `{"type":"object","allOf":[{"required":["a"]},{"properties":{"a":{"minimum":1}}}]}`, `{"a":0}`},
	{"anyOf", `{"type":"object","properties":{"mode":{"anyOf":[{"type":"integer"},{"const":"auto"}]}}}`, `{"mode":"manual"}`},
	{"oneOf-none", `{"type":"object","properties":{"mode":{"oneOf":[{"type":"integer"},{"enum":["auto","off"]}]}}}`, `{"mode":"on"}`},
	{"oneOf-both", `{"type":"object","properties":{"n":{"oneOf":[{"type":"integer"},{"minimum":0}]}}}`, `{"n":3}`},
	{"not", `{"type":"object","properties":{"s":{"not":{"const":"root"}}}}`, `{"s":"root"}`},
	{"if-then", `{"type":"object","if":{"properties":{"unit":{"const":"pct"}}},"then":{"properties":{"v":{"maximum":100}}},"else":{"properties":{"v":{"maximum":1}}}}`, `{"unit":"pct","v":101}`},
	{"if-else", `{"type":"object","if":{"properties":{"unit":{"const":"pct"}}},"then":{"properties":{"v":{"maximum":100}}},"else":{"properties":{"v":{"maximum":1}}}}`, `{"unit":"x","v":2}`},
	{"draft7-ref-ignores-siblings", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"$ref":"#/definitions/s","maxLength":1}},"definitions":{"s":{"type":"string"}}}`, `{"a":5}`},
	{"draft7-items-list", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"p":{"items":[{"type":"number"}],"additionalItems":{"type":"string"}}}}`, `{"p":[1,"a",2]}`},
	{"draft7-dependencies", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","dependencies":{"card":["cvc"]}}`, `{"card":"1"}`},
	{"long-value", `{"type":"object","properties":{"s":{"maxLength":3}}}`, `{"s":"` + strings.Repeat("x", 100) + `"}`},
	{"odd-key", `{"type":"object","properties":{"weird key/~":{"type":"integer"}}}`, `{"weird key/~":"1"}`},
	{"unevaluatedProperties", `{"type":"object","allOf":[{"properties":{"a":{}}}],"unevaluatedProperties":false}`, `{"a":1,"b":2}`},
	{"unevaluatedProperties-anyOf", `{"type":"object","anyOf":[{"properties":{"a":{"type":"string"}}},{"properties":{"b":{}}}],"unevaluatedProperties":{"type":"integer"}}`, `{"a":1,"b":2,"c":"x"}`},
	{"unevaluatedItems-contains", `{"type":"object","properties":{"a":{"prefixItems":[{}],"contains":{"type":"string"},"unevaluatedItems":{"type":"null"}}}}`, `{"a":[1,"x",null,2]}`},
	{"unevaluatedItems", `{"type":"object","properties":{"a":{"prefixItems":[{}],"unevaluatedItems":false}}}`, `{"a":[1,2]}`},
}

// TestDetailsGolden pins the details of a refusal for each keyword, in
// testdata/details.golden (go test -run TestDetailsGolden -update rewrites it).
func TestDetailsGolden(t *testing.T) {
	var got strings.Builder
	for _, c := range detailsCases {
		var params jsonschema.Schema
		if err := json.Unmarshal([]byte(c.schema), &params); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		r := tools.NewRegistry()
		err := r.Add(&tools.Tool{
			Declaration: tools.Declaration{Name: "t", Description: "d", MainType: tools.Remote, SubType: tools.Control, Parameters: &params},
			Handler:     nop,
		})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		_, err = r.Validate("t", json.RawMessage(c.input))
		var pe *tools.ParamsError
		if !errors.As(err, &pe) {
			t.Fatalf("%s: Validate(%s) = %v, want a *ParamsError", c.name, c.input, err)
		}
		fmt.Fprintf(&got, "# %s\nschema:  %s\ninput:   %s\ndetails: %s\n\n", c.name, c.schema, c.input, pe.Details)
	}
	path := filepath.Join("testdata", "details.golden")
	if *update {
		if err := os.WriteFile(path, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestDetailsGolden -update to create it)", err)
	}
	gotCases, wantCases := strings.Split(got.String(), "\n\n"), strings.Split(string(want), "\n\n")
	for i := range max(len(gotCases), len(wantCases)) {
		var g, w string
		if i < len(gotCases) {
			g = gotCases[i]
		}
		if i < len(wantCases) {
			w = wantCases[i]
		}
		if g != w {
			t.Errorf("case %d:\n got %s\nwant %s", i, g, w)
		}
	}
	if t.Failed() {
		t.Log("run go test -run TestDetailsGolden -update if the change is meant")
	}
}
