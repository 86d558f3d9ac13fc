package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/devicectl/devicectl/tools"
	"github.com/google/jsonschema-go/jsonschema"
)

func nop(context.Context, json.RawMessage) (any, error) { return nil, nil }

func objectSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"level": {Type: "integer"}}}
}

// validTool returns a tool Add accepts, for the rejection cases to break.
func validTool() *tools.Tool {
	return &tools.Tool{
		Declaration: tools.Declaration{
			Name: "amplify_volume", Description: "Set the volume.",
			MainType: tools.Remote, SubType: tools.Control, Parameters: objectSchema(),
		},
		Handler: nop,
	}
}

func TestAddRejects(t *testing.T) {
	tests := []struct {
		name   string
		change func(*tools.Tool)
		want   string // the error must contain this
	}{
		{"empty name", func(t *tools.Tool) { t.Name = "" }, `tool "": name "" does not match`},
		{"space in name", func(t *tools.Tool) { t.Name = "set volume" }, `tool "set volume": name "set volume" does not match ^[a-zA-Z0-9_-]{1,64}$`},
		{"dot in name", func(t *tools.Tool) { t.Name = "volume.set" }, `name "volume.set" does not match`},
		{"name too long", func(t *tools.Tool) { t.Name = strings.Repeat("a", 65) }, `does not match`},
		{"non-ASCII name", func(t *tools.Tool) { t.Name = "音量" }, `name "音量" does not match`},
		{"empty description", func(t *tools.Tool) { t.Description = "" }, `tool "amplify_volume": description is empty`},
		{"blank description", func(t *tools.Tool) { t.Description = " \n" }, `description is empty`},
		{"bad main_type", func(t *tools.Tool) { t.MainType = "device" }, `main_type "device" is not "remote" or "local"`},
		{"missing main_type", func(t *tools.Tool) { t.MainType = "" }, `main_type "" is not`},
		{"bad sub_type", func(t *tools.Tool) { t.SubType = "Query" }, `sub_type "Query" is not "control" or "query"`},
		{"several problems at once", func(t *tools.Tool) { t.Description = ""; t.SubType = "x" }, `description is empty (the server's model decides when to call a tool from it); sub_type "x"`},
		{"nil handler", func(t *tools.Tool) { t.Handler = nil }, `tool "amplify_volume": handler is nil`},
		{"empty resource", func(t *tools.Tool) { t.Resources = []string{"speaker", ""} }, `empty resource name`},
		{"negative timeout", func(t *tools.Tool) { t.Timeout = -1 }, `negative timeout`},
		{"nil parameters", func(t *tools.Tool) { t.Parameters = nil }, `tool "amplify_volume": parameters are missing`},
		{"array parameters", func(t *tools.Tool) { t.Parameters = &jsonschema.Schema{Type: "array"} }, `parameters: type is "array", want "object"`},
		{"untyped parameters", func(t *tools.Tool) { t.Parameters = &jsonschema.Schema{} }, `parameters: type is missing, want "object"`},
		{"nullable parameters", func(t *tools.Tool) { t.Parameters = &jsonschema.Schema{Types: []string{"null", "object"}} }, `parameters: type is ["null" "object"], want "object"`},
		{"type typo deep down", func(t *tools.Tool) {
			t.Parameters.Properties["level"] = &jsonschema.Schema{Type: "int"}
		}, `parameters/properties/level: type "int" is not one of`},
		{"unresolvable ref", func(t *tools.Tool) {
			t.Parameters.Properties["level"] = &jsonschema.Schema{Ref: "#/$defs/missing"}
		}, `tool "amplify_volume": parameters: `},
		{"bad pattern", func(t *tools.Tool) {
			t.Parameters.Properties["level"] = &jsonschema.Schema{Type: "string", Pattern: "("}
		}, `pattern: error parsing regexp`},
		{"nil sub-schema", func(t *tools.Tool) { t.Parameters.Properties["level"] = nil }, `parameters: `},
		{"unsupported draft", func(t *tools.Tool) { t.Parameters.Schema = "http://json-schema.org/draft-04/schema#" }, `$schema "http://json-schema.org/draft-04/schema#" is not draft-07 or draft 2020-12`},
		{"unmarshallable", func(t *tools.Tool) { t.Parameters.Types = []string{"object"} }, `both Type and Types are set`},
		{"reference loop at the root", withSchema(`{"type":"object","$ref":"#"}`),
			`parameters: references loop back here without moving into the input`},
		{"reference loop through allOf", withSchema(`{"type":"object","allOf":[{"$ref":"#"}]}`),
			`parameters: references loop back here`},
		{"reference loop through $defs", withSchema(`{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},
			"$defs":{"x":{"anyOf":[{"$ref":"#/$defs/y"}]},"y":{"not":{"$ref":"#/$defs/x"}}}}`),
			`parameters/$defs/x: references loop back here`},
		{"reference to another document", withSchema(`{"type":"object","properties":{"a":{"$ref":"other.json#/x"}}}`),
			`parameters: loading /other.json: cannot resolve remote schemas`},
		{"reference to an anchor", withSchema(`{"type":"object","properties":{"a":{"$ref":"#here"},"b":{"$anchor":"here"}}}`),
			`parameters/properties/a: $ref "#here": only local references`},
		{"dynamic reference", withSchema(`{"type":"object","$dynamicAnchor":"n","properties":{"a":{"$dynamicRef":"#n"}}}`),
			`parameters/properties/a: $dynamicRef is not supported`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := validTool()
			tt.change(tool)
			err := tools.NewRegistry().Add(tool)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Add = %v, want an error containing %q", err, tt.want)
			}
		})
	}
	t.Run("nil tool", func(t *testing.T) {
		if err := tools.NewRegistry().Add(nil); err == nil {
			t.Error("Add(nil) = nil, want an error")
		}
	})
	t.Run("duplicate", func(t *testing.T) {
		r := tools.NewRegistry()
		if err := r.Add(validTool()); err != nil {
			t.Fatal(err)
		}
		err := r.Add(validTool())
		if want := `tools: tool "amplify_volume": already registered`; err == nil || err.Error() != want {
			t.Errorf("second Add = %v, want %q", err, want)
		}
		if n := len(r.Tools()); n != 1 {
			t.Errorf("%d tools after a rejected duplicate, want 1", n)
		}
	})
}

// withSchema replaces the tool's parameters by a schema written in JSON.
func withSchema(schema string) func(*tools.Tool) {
	return func(t *tools.Tool) {
		t.Parameters = new(jsonschema.Schema)
		if err := json.Unmarshal([]byte(schema), t.Parameters); err != nil {
			panic(err)
		}
	}
}

// TestAddAcceptsReferences checks that references which move into the
// input, however recursive, are accepted.
func TestAddAcceptsReferences(t *testing.T) {
	for _, schema := range []string{
		treeSchema,
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/x"},"b":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"integer"}}}`,
		`{"type":"object","properties":{"a b":{"type":"string"},"c":{"$ref":"#/properties/a%20b"},"d/e":{"$ref":"#/properties/c"}}}`,
		`{"type":"object","properties":{"sub":{"$id":"https://example.com/sub","type":"object",
			"properties":{"n":{"$ref":"#/$defs/n"}},"$defs":{"n":{"type":"integer"}}}}}`,
		`{"type":"object","properties":{"next":{"anyOf":[{"type":"null"},{"$ref":"#"}]}}}`,
	} {
		tool := validTool()
		withSchema(schema)(tool)
		if err := tools.NewRegistry().Add(tool); err != nil {
			t.Errorf("Add(%s) = %v", schema, err)
		}
	}
}

func TestRegistryOrderAndLookup(t *testing.T) {
	r := tools.NewRegistry()
	names := []string{"zeta", "alpha", "mid-1", "B_2"}
	for _, n := range names {
		tool := validTool()
		tool.Name = n
		if err := r.Add(tool); err != nil {
			t.Fatal(err)
		}
	}
	for i, tool := range r.Tools() {
		if tool.Name != names[i] {
			t.Errorf("Tools()[%d] = %s, want %s", i, tool.Name, names[i])
		}
	}
	for i, d := range r.Declarations() {
		if d.Name != names[i] {
			t.Errorf("Declarations()[%d] = %s, want %s", i, d.Name, names[i])
		}
	}
	if tool, ok := r.Lookup("mid-1"); !ok || tool.Name != "mid-1" {
		t.Errorf("Lookup(mid-1) = %v, %v", tool, ok)
	}
	if tool, ok := r.Lookup("MID-1"); ok {
		t.Errorf("Lookup(MID-1) = %v, want none: names are case sensitive", tool)
	}
}

// TestRegistryIsolation checks that neither a caller changing a returned
// declaration nor a caller changing its tool's schema after Add can change
// what the registry validates.
func TestRegistryIsolation(t *testing.T) {
	r := tools.NewRegistry()
	tool := validTool()
	tool.Parameters.Properties["level"].Maximum = jsonschema.Ptr(100.0)
	if err := r.Add(tool); err != nil {
		t.Fatal(err)
	}
	r.Declarations()[0].Parameters.Properties["level"].Maximum = jsonschema.Ptr(1000.0)
	if d := r.Declarations()[0]; *d.Parameters.Properties["level"].Maximum != 100 {
		t.Errorf("a caller's change to Declarations() leaked into the registry")
	}
	tool.Parameters.Properties["level"] = &jsonschema.Schema{Type: "string"}
	if _, err := r.Validate("amplify_volume", json.RawMessage(`{"level":150}`)); err == nil {
		t.Error("Validate accepted 150 after the caller changed its schema; the resolved copy must be private")
	}
}

// TestRegistryConcurrent runs readers against a registry, and an Add, at
// once; run with -race.
func TestRegistryConcurrent(t *testing.T) {
	r := newRegistry(t)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				level := (i*50 + j) % 200
				_, err := r.Validate("amplify_volume", json.RawMessage(fmt.Sprintf(`{"level":%d}`, level)))
				if (err == nil) != (level <= 100) {
					errs <- fmt.Errorf("Validate(level %d) = %v", level, err)
					return
				}
				if _, ok := r.Lookup("get_device_status"); !ok {
					errs <- fmt.Errorf("Lookup(get_device_status) failed")
					return
				}
				if _, err := json.Marshal(r.Declarations()); err != nil {
					errs <- err
					return
				}
				_ = r.Tools()
			}
		})
	}
	wg.Go(func() {
		tool := validTool()
		tool.Name = "late"
		if err := r.Add(tool); err != nil {
			errs <- err
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if _, ok := r.Lookup("late"); !ok {
		t.Error("the concurrent Add was lost")
	}
}
