package openapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/devicectl/devicectl/tools/openapi"
)

// schemaOf returns the input schema of the named tool as JSON.
func schemaOf(t *testing.T, ts *openapi.ToolSet, name string) string {
	t.Helper()
	for _, tool := range ts.Tools() {
		if tool.Name == name {
			b, err := json.Marshal(tool.Parameters)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
	}
	t.Fatalf("no tool %q in %q", name, ts.Names())
	return ""
}

// The Petstore 3.1 shape: schemas referred to by $id (absolute and
// relative, with and without a fragment), by $anchor, and by a pointer
// relative to a schema with an $id; webhooks; unknown keywords. As YAML
// and as JSON (Petstore serves openapi.json).
func TestPetstore31(t *testing.T) {
	data, err := os.ReadFile("testdata/petstore-3.1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var tree any
	if err := yaml.Unmarshal(data, &tree); err != nil {
		t.Fatal(err)
	}
	asJSON, err := json.MarshalIndent(tree, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	const pet = `{"properties":{` +
		`"category":{"properties":{"id":{"type":"integer","format":"int64"},"name":{"type":"string"}},"description":"Pet category"},` +
		`"details":{"properties":{"category":{"properties":{"id":{"type":"integer","format":"int64"},"name":{"type":"string"}},"description":"Details category"},"id":{"type":"integer","examples":["10"],"format":"int64"},"tag":{"properties":{"id":{"type":"integer","format":"int64"},"name":{"type":"string"}}}}},` +
		`"detailsId":{"type":"integer","examples":["10"],"allOf":[{"type":"integer","format":"int64"}],"format":"int64"},` +
		`"id":{"type":"integer","format":"int64"},` +
		`"name":{"type":"string","examples":["Rex"]},` +
		`"owner":{"type":"object","properties":{"name":{"type":"string"},"pet":{"type":"string","maxLength":40}}},` +
		`"status":{"type":"string","enum":["available","pending","sold"]},` +
		`"tags":{"type":"array","items":{"properties":{"id":{"type":"integer","format":"int64"},"name":{"type":"string"}}}}},` +
		`"description":"Pet","required":["name"]}`
	for _, doc := range []struct{ name, data string }{{"yaml", string(data)}, {"json", string(asJSON)}} {
		t.Run(doc.name, func(t *testing.T) {
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			ts, err := openapi.FromData([]byte(doc.data), &openapi.Options{BaseURL: "http://shop.local", Logger: log})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"health", "addPet", "updatePet", "findPetsByTags", "getPetById", "getInventory", "vetRecords"}
			if got := ts.Names(); !slices.Equal(got, want) {
				t.Errorf("Names() = %q, want %q (webhooks are no tools)", got, want)
			}
			if got, want := schemaOf(t, ts, "addPet"), `{"type":"object","properties":{"body":`+pet+`},"required":["body"],"additionalProperties":false}`; got != want {
				t.Errorf("addPet:\n got %s\nwant %s", got, want)
			}
			if !strings.Contains(logs.String(), "webhooks ignored") || !strings.Contains(logs.String(), "petAdopted") {
				t.Errorf("no debug record about the ignored webhook petAdopted:\n%s", logs.String())
			}
		})
	}
}

// The shape of the OpenAPI Initiative's mega.yaml: components.pathItems
// referred to from paths (with an overriding summary), from a webhook and
// from a schema; a path item without operations; 3.1 keywords and unknown
// ones.
func TestPathItems31(t *testing.T) {
	ts, err := openapi.Load(context.Background(), "testdata/pathitems-3.1.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ts.Names(), []string{"root", "getLamp", "setLamp"}; !slices.Equal(got, want) {
		t.Errorf("Names() = %q, want %q", got, want)
	}
	const want = `{"type":"object","properties":{"lamp":{"type":"string"},"body":{"type":"object","properties":{` +
		`"level":{"type":"integer","exclusiveMinimum":0,"exclusiveMaximum":100},"none":{"type":"null"},` +
		`"room":{"type":["string","null"]},"scenes":{"type":"array"},"type":{"type":"string"}}}},` +
		`"required":["lamp","body"],"additionalProperties":false}`
	if got := schemaOf(t, ts, "setLamp"); got != want {
		t.Errorf("setLamp:\n got %s\nwant %s", got, want)
	}
	if ts.BaseURL() != "http://lights.invalid/v1" {
		t.Errorf("BaseURL() = %q", ts.BaseURL())
	}
	// Webhooks are not looked into: one that refers to nothing does not
	// stop the document.
	const hooked = "openapi: 3.1.0\ninfo: {title: T, version: '1'}\nservers: [{url: 'http://x'}]\npaths:\n  /a: {get: {operationId: a}}\n" +
		"webhooks:\n  gone: {$ref: '#/components/pathItems/nope'}\n  odd: {post: {requestBody: {content: {application/json: {schema: {$ref: '#nowhere'}}}}}}\n"
	if ts, err := openapi.FromData([]byte(hooked), nil); err != nil || !slices.Equal(ts.Names(), []string{"a"}) {
		t.Errorf("a document with broken webhooks: %v", err)
	}
}

// References by $id or $anchor that lead nowhere, and path items that
// refer to each other in a cycle, are errors that say which reference.
func TestRefs31Errors(t *testing.T) {
	const head = "openapi: 3.1.0\ninfo: {title: T, version: '1'}\nservers: [{url: 'http://x'}]\n"
	const op = "paths:\n  /a:\n    post:\n      requestBody:\n        content:\n          application/json:\n            schema: {$ref: '%s'}\n"
	schemas := "components:\n  schemas:\n    A:\n      $id: https://x.example/a\n      $anchor: top\n      properties:\n        b: {type: string, $anchor: bee}\n"
	tests := []struct{ name, doc, want string }{
		{"unknown anchor", head + strings.Replace(op, "%s", "#nope", 1) + schemas,
			`#/paths/~1a/post/requestBody/content/application~1json/schema: $ref "#nope": no schema has $anchor "nope" in the document`},
		{"unknown anchor in a resource", head + strings.Replace(op, "%s", "https://x.example/a#nope", 1) + schemas,
			`$ref "https://x.example/a#nope": no schema has $anchor "nope" in #/components/schemas/A`},
		{"pointer outside the resource", head + strings.Replace(op, "%s", "https://x.example/a#/properties/c", 1) + schemas,
			`$ref "https://x.example/a#/properties/c": nothing at /properties/c in the schema #/components/schemas/A`},
		{"path item cycle", head + "paths:\n  /a: {$ref: '#/components/pathItems/p'}\ncomponents:\n  pathItems:\n    p:\n      get:\n        callbacks:\n          c:\n            '{$url}': {$ref: '#/components/pathItems/p'}\n",
			`$ref "#/components/pathItems/p": path items refer to each other in a cycle`},
		{"missing path item", head + "paths:\n  /a: {$ref: '#/components/pathItems/q'}\ncomponents:\n  pathItems: {}\n",
			`$ref "#/components/pathItems/q": no such path item`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := openapi.FromData([]byte(tt.doc), nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v\nwant %q in it", err, tt.want)
			}
		})
	}
	// The same references resolve when they lead somewhere; "#top" and
	// "#bee" are anchors of the schema with the $id, not of the document,
	// found because they are the only ones of their names.
	for _, ref := range []string{"#top", "https://x.example/a", "https://x.example/a#top", "https://x.example/a#/properties/b", "#bee"} {
		ts, err := openapi.FromData([]byte(head+strings.Replace(op, "%s", ref, 1)+schemas), nil)
		if err != nil {
			t.Errorf("$ref %q: %v", ref, err)
			continue
		}
		want := `{"properties":{"b":{"type":"string"}}}`
		if ref == "https://x.example/a#/properties/b" || ref == "#bee" {
			want = `{"type":"string"}`
		}
		if got := schemaOf(t, ts, ts.Names()[0]); !strings.Contains(got, `"body":`+want) {
			t.Errorf("$ref %q: schema %s\nwant body %s", ref, got, want)
		}
	}
}

// A 3.1 document with $ids is read from a file: relative $ids resolve
// against the file and never make the loader open another one.
func TestPetstore31File(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile("testdata/petstore-3.1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "shop.yaml")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := openapi.Load(context.Background(), p, &openapi.Options{BaseURL: "http://shop.local"}); err != nil {
		t.Fatal(err)
	}
}

// Names that are keywords elsewhere (a property "default", the default
// response) are walked; examples and defaults are data, left as they are.
func TestRefs31Walk(t *testing.T) {
	const doc = `openapi: 3.1.0
info: {title: T, version: "1"}
servers: [{url: "http://x"}]
paths:
  /a:
    post:
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                default: {$ref: "urn:t:level"}
              example: {default: {$ref: "urn:t:level"}}
              default: {$id: "urn:t:level"}
      responses:
        default:
          description: Any.
          content:
            application/json:
              schema: {$ref: "urn:t:level"}
components:
  schemas:
    Level: {$id: "urn:t:level", type: integer, maximum: 9}
`
	ts, err := openapi.FromData([]byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := schemaOf(t, ts, "post_a")
	for _, want := range []string{`"properties":{"default":{"type":"integer","maximum":9}}`, `"examples":[{"default":{"$ref":"urn:t:level"}}]`} {
		if !strings.Contains(got, want) {
			t.Errorf("schema %s\nwant %s in it", got, want)
		}
	}
	// A document that was rewritten has no line numbers in its errors:
	// they would be those of the rewritten text.
	_, err = openapi.FromData([]byte(strings.Replace(doc, "type: integer", "type: integr", 1)), nil)
	if err == nil || strings.Contains(err.Error(), ": line ") || !strings.Contains(err.Error(), `schema "Level": unsupported 'type' value "integr"`) {
		t.Errorf("error %v, want one about integr without a line", err)
	}
}

// YAML anchors and aliases inside path items survive their inlining, and
// aliases cannot make inlining copy without bound.
func TestPathItemsAliases(t *testing.T) {
	const doc = `openapi: 3.1.0
info: {title: T, version: "1"}
servers: [{url: "http://x"}]
paths:
  /a: &pa {$ref: "#/components/pathItems/p"}
  /b: *pa
components:
  pathItems:
    p:
      get:
        operationId: %s
        parameters:
          - &q {name: q, in: query, schema: {type: string}}
      put:
        parameters: [*q]
`
	ts, err := openapi.FromData([]byte(strings.Replace(doc, "%s", "getA", 1)), nil)
	if err == nil {
		// /b is /a again, operationId and all.
		t.Fatalf("no error for the duplicated operationId; tools %q", ts.Names())
	}
	if !strings.Contains(err.Error(), "getA") {
		t.Errorf("error %v, want one about the operationId getA used twice", err)
	}
	ts, err = openapi.FromData([]byte(strings.Replace(doc, "        operationId: %s\n", "", 1)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ts.Names(), []string{"get_a", "put_a", "get_b", "put_b"}; !slices.Equal(got, want) {
		t.Errorf("Names() = %q, want %q", got, want)
	}
	for _, name := range ts.Names() {
		if got := schemaOf(t, ts, name); !strings.Contains(got, `"q":{"type":"string"}`) {
			t.Errorf("%s: %s, want the aliased parameter q", name, got)
		}
	}

	var bomb strings.Builder
	bomb.WriteString("openapi: 3.1.0\ninfo: {title: T, version: \"1\"}\npaths:\n  /a: {$ref: \"#/components/pathItems/p\"}\ncomponents:\n  pathItems:\n    p:\n      x-bomb:\n        l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 8; i++ {
		fmt.Fprintf(&bomb, "        l%d: &l%d [*l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	_, err = openapi.FromData([]byte(bomb.String()), nil)
	if err == nil || !strings.Contains(err.Error(), "excessive aliasing") {
		t.Errorf("alias bomb in a path item: error %v, want one about excessive aliasing", err)
	}
}
