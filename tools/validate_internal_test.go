package tools

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// quickSchemas are parameters of the shapes quickCheck takes, and a few it must turn down.
var quickSchemas = map[string]string{
	"volume":     `{"type":"object","properties":{"level":{"type":"integer","description":"d","minimum":0,"maximum":100}},"required":["level"],"additionalProperties":false}`,
	"expression": `{"type":"object","properties":{"expression":{"type":"string","enum":["smile","cry"]}},"required":["expression"],"additionalProperties":false}`,
	"none":       `{"type":"object","properties":{},"additionalProperties":false}`,
	"open":       `{"type":"object","properties":{"gain":{"type":"number","minimum":-3},"on":{"type":"boolean"},"name":{"type":"string"}}}`,
}

// Turned down: each uses something quickCheck does not check.
var notQuick = []string{
	`{"type":"object","properties":{"s":{"type":"string","maxLength":3}}}`,
	`{"type":"object","properties":{"n":{"type":"number","maximum":1.5}}}`,
	`{"type":"object","properties":{"n":{"type":["integer","null"]}}}`,
	`{"type":"object","properties":{"a":{"type":"array"}}}`,
	`{"type":"object","properties":{"n":{"type":"integer","enum":[1,2]}}}`,
	`{"type":"object","patternProperties":{"^x":{"type":"string"}}}`,
	`{"type":"object","properties":{"n":{"$ref":"#/$defs/n"}},"$defs":{"n":{"type":"integer"}}}`,
	`{"type":"object","additionalProperties":{"type":"string"}}`,
	`{"type":"object","properties":{"n":{"type":"integer","minimum":9007199254740994}}}`,
}

func resolvedFor(t testing.TB, src string) *jsonschema.Resolved {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(src), &s); err != nil {
		t.Fatal(err)
	}
	rs, err := resolve(&s)
	if err != nil {
		t.Fatal(err)
	}
	return rs.Resolved
}

// quickAgrees checks that whatever quickCheck accepts, the full validation accepts too.
func quickAgrees(t *testing.T, name string, rs *jsonschema.Resolved, q *quickCheck, input []byte) (quick bool) {
	t.Helper()
	instance, err := decodeInstance(input)
	if err != nil || !q.valid(instance) {
		return false
	}
	if err := rs.Validate(instance); err != nil {
		t.Errorf("%s: quickCheck accepted %s, which fails validation: %v", name, input, err)
	}
	return true
}

func TestQuickCheck(t *testing.T) {
	for name, src := range quickSchemas {
		if compileQuick(resolvedFor(t, src).Schema()) == nil {
			t.Errorf("%s: no quick check for %s", name, src)
		}
	}
	for _, src := range notQuick {
		if compileQuick(resolvedFor(t, src).Schema()) != nil {
			t.Errorf("a quick check for %s", src)
		}
	}
	cases := []struct {
		schema, input string
		quick         bool // whether quickCheck must be sure of it
	}{
		{"volume", `{"level":80}`, true},
		{"volume", `{"level":0}`, true},
		{"volume", `{"level":100}`, true},
		{"volume", `{"level":101}`, false},
		{"volume", `{"level":-1}`, false},
		{"volume", `{"level":80.0}`, false}, // valid, but for the full check to say
		{"volume", `{"level":"80"}`, false},
		{"volume", `{}`, false},
		{"volume", `{"level":1,"x":2}`, false},
		{"volume", `{"level":null}`, false},
		{"volume", `[80]`, false},
		{"expression", `{"expression":"smile"}`, true},
		{"expression", `{"expression":"grin"}`, false},
		{"none", `{}`, true},
		{"none", `{"a":1}`, false},
		{"open", `{"gain":-3,"on":true,"name":"x","other":[1]}`, true},
		{"open", `{"gain":-3.5}`, false},
		{"open", `{"gain":2.5}`, true},
		{"open", `{"gain":1e300}`, true},
		{"open", `{"on":1}`, false},
	}
	for _, c := range cases {
		rs := resolvedFor(t, quickSchemas[c.schema])
		q := compileQuick(rs.Schema())
		if got := quickAgrees(t, c.schema, rs, q, []byte(c.input)); got != c.quick {
			t.Errorf("%s %s: quick check sure = %v, want %v", c.schema, c.input, got, c.quick)
		}
	}
}

// The tools Func builds from plain structs get the quick check, and Prepare uses it.
func TestQuickCheckForFuncTools(t *testing.T) {
	type in struct {
		Level int    `json:"level" tool:"min=0,max=100"`
		Mode  string `json:"mode,omitempty" tool:"enum=a|b"`
	}
	tool, err := Func(Declaration{Name: "t", Description: "d", MainType: Remote, SubType: Control}, func(ctx context.Context, in in) (int, error) { return in.Level, nil })
	if err != nil {
		t.Fatal(err)
	}
	r := NewRegistry()
	if err := r.Add(tool); err != nil {
		t.Fatal(err)
	}
	if r.lookup("t").quick == nil {
		b, _ := json.Marshal(tool.Parameters)
		t.Fatalf("no quick check for the Func tool's parameters %s", b)
	}
	if _, err := r.Prepare("t", json.RawMessage(`{"level":7,"mode":"b"}`)); err != nil {
		t.Error(err)
	}
	if _, err := r.Prepare("t", json.RawMessage(`{"level":7,"mode":"c"}`)); err == nil {
		t.Error("an input out of the enum was accepted")
	}
}

// FuzzQuickCheck: whatever input quickCheck accepts, the full validation accepts.
func FuzzQuickCheck(f *testing.F) {
	for _, s := range []string{`{"level":80}`, `{"expression":"smile"}`, `{"gain":-3,"on":true}`, `{}`, `{"level":1e2}`} {
		f.Add([]byte(s))
	}
	type compiled struct {
		rs *jsonschema.Resolved
		q  *quickCheck
	}
	schemas := map[string]compiled{}
	for name, src := range quickSchemas {
		rs := resolvedFor(f, src)
		schemas[name] = compiled{rs, compileQuick(rs.Schema())}
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		for name, c := range schemas {
			quickAgrees(t, name, c.rs, c.q, input)
		}
	})
}
