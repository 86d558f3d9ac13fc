package opentool

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/tools"
	"github.com/google/jsonschema-go/jsonschema"
)

// decl builds a declaration from the JSON of its parameters.
func decl(t *testing.T, name, params string) tools.Declaration {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(params), &s); err != nil {
		t.Fatalf("bad test schema %s: %v", params, err)
	}
	return tools.Declaration{Name: name, Description: "Tool " + name + ".", MainType: tools.Remote, SubType: tools.Control, Parameters: &s}
}

func TestNewDocument(t *testing.T) {
	point2 := `"Point":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}}}`
	point3 := `"Point":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"},"z":{"type":"number"}}}`
	decls := []tools.Declaration{
		decl(t, "move", `{"type":"object","properties":{"to":{"$ref":"#/$defs/Point"}},"$defs":{`+point2+`}}`),
		// The same Point: shared.
		decl(t, "look", `{"type":"object","properties":{"at":{"$ref":"#/$defs/Point"}},"$defs":{`+point2+`}}`),
		decl(t, "walk", `{"type":"object","properties":{"via":{"$ref":"#/$defs/Path"}},"$defs":{`+point2+`,"Path":{"type":"array","items":{"$ref":"#/$defs/Point"}}}}`),
		// Another Point: renamed. Path reads as walk's, but means another
		// Point: renamed too, and referring to the new Point.
		decl(t, "fly", `{"type":"object","properties":{"to":{"$ref":"#/$defs/Point"},"via":{"$ref":"#/$defs/Path"}},
			"$defs":{`+point3+`,"Path":{"type":"array","items":{"$ref":"#/$defs/Point"}}}}`),
		// Cannot be expressed: left out, named in the error.
		decl(t, "odd", `{"type":"object","properties":{"v":{"type":["string","integer"]}}}`),
		// A name taken: left out.
		decl(t, "move", `{"type":"object","properties":{}}`),
		decl(t, "stop", `{"type":"object","properties":{}}`),
	}
	doc, err := NewDocument(Info{Title: "Robot", Description: "A robot's tools.", Version: "1.0"}, decls)
	if doc == nil {
		t.Fatalf("NewDocument = nil, %v", err)
	}
	wantErr := `opentool: tool "odd": parameters.properties.v: type ["string","integer"] cannot be expressed: OpenTool has one type per schema (left out)` + "\n" +
		`opentool: tool "move": left out: an earlier tool has the same name`
	if err == nil || err.Error() != wantErr {
		t.Errorf("NewDocument error:\n%v\nwant:\n%s", err, wantErr)
	}
	got, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "opentool": "1.0.0",
  "info": {
    "title": "Robot",
    "description": "A robot's tools.",
    "version": "1.0"
  },
  "functions": [
    {
      "name": "move",
      "description": "Tool move.",
      "parameters": [
        {
          "name": "to",
          "schema": {
            "$ref": "#/schemas/Point"
          },
          "required": false
        }
      ]
    },
    {
      "name": "look",
      "description": "Tool look.",
      "parameters": [
        {
          "name": "at",
          "schema": {
            "$ref": "#/schemas/Point"
          },
          "required": false
        }
      ]
    },
    {
      "name": "walk",
      "description": "Tool walk.",
      "parameters": [
        {
          "name": "via",
          "schema": {
            "$ref": "#/schemas/Path"
          },
          "required": false
        }
      ]
    },
    {
      "name": "fly",
      "description": "Tool fly.",
      "parameters": [
        {
          "name": "to",
          "schema": {
            "$ref": "#/schemas/Point_2"
          },
          "required": false
        },
        {
          "name": "via",
          "schema": {
            "$ref": "#/schemas/Path_2"
          },
          "required": false
        }
      ]
    },
    {
      "name": "stop",
      "description": "Tool stop.",
      "parameters": []
    }
  ],
  "schemas": {
    "Path": {
      "type": "array",
      "items": {
        "$ref": "#/schemas/Point"
      }
    },
    "Path_2": {
      "type": "array",
      "items": {
        "$ref": "#/schemas/Point_2"
      }
    },
    "Point": {
      "type": "object",
      "properties": {
        "x": {
          "type": "number"
        },
        "y": {
          "type": "number"
        }
      }
    },
    "Point_2": {
      "type": "object",
      "properties": {
        "x": {
          "type": "number"
        },
        "y": {
          "type": "number"
        },
        "z": {
          "type": "number"
        }
      }
    }
  }
}`
	if string(got) != want {
		t.Errorf("document:\n%s\nwant:\n%s", got, want)
	}
	// What the device serves, an SDK reads, and so does Parse.
	back, err := Parse(got)
	if err != nil {
		t.Fatalf("Parse(NewDocument): %v", err)
	}
	if d := diff(doc, back); d != "" {
		t.Errorf("Parse(NewDocument) differs:\n%s", d)
	}
}

// TestNewDocumentRegistry serves the device's own typed tools.
func TestNewDocumentRegistry(t *testing.T) {
	_, r := smartHomeRegistry(t)
	doc, err := NewDocument(Info{Title: "t", Version: "1"}, r.Declarations())
	if err != nil {
		t.Fatal(err)
	}
	orig := readSmartHome(t)
	if len(doc.Functions) != len(orig.Functions) {
		t.Fatalf("%d functions, want %d", len(doc.Functions), len(orig.Functions))
	}
	// All tools share one set of schemas: nothing was renamed. The return
	// value's LightState is not reachable from any parameter.
	delete(orig.Schemas, "LightState")
	if d := diff(orig.Schemas, doc.Schemas); d != "" {
		t.Errorf("schemas:\n%s", d)
	}
}

func TestNewDocumentRenameLimits(t *testing.T) {
	long := strings.Repeat("L", 64)
	decls := []tools.Declaration{
		decl(t, "a", `{"type":"object","properties":{"p":{"$ref":"#/$defs/`+long+`"}},"$defs":{"`+long+`":{"type":"string"}}}`),
		decl(t, "b", `{"type":"object","properties":{"p":{"$ref":"#/$defs/`+long+`"}},"$defs":{"`+long+`":{"type":"integer"}}}`),
		// The obvious new name is taken by this tool's own schema.
		decl(t, "c", `{"type":"object","properties":{"p":{"$ref":"#/$defs/`+long+`"},"q":{"$ref":"#/$defs/`+long[:62]+`_3"}},
			"$defs":{"`+long+`":{"type":"boolean"},"`+long[:62]+`_3":{"type":"number"}}}`),
	}
	doc, err := NewDocument(Info{Title: "t", Version: "1"}, decls)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"a": long, "b": long[:62] + "_2", "c": long[:62] + "_4"} {
		if got := doc.Function(name).Parameters[0].Schema.Ref; got != RefPrefix+want {
			t.Errorf("%s refers to %s, want %s", name, got, RefPrefix+want)
		}
	}
	if err := doc.Validate(); err != nil {
		t.Error(err)
	}
}

func TestNewDocumentInfo(t *testing.T) {
	doc, err := NewDocument(Info{Title: "t"}, nil)
	if doc != nil || err == nil || !strings.Contains(err.Error(), "info needs a title and a version") {
		t.Errorf("NewDocument without version = %v, %v", doc, err)
	}
	doc, err = NewDocument(Info{Title: "t", Version: "1"}, nil)
	if err != nil || doc.Functions == nil || doc.Schemas != nil {
		t.Errorf("NewDocument without tools = %+v, %v", doc, err)
	}
	var joined interface{ Unwrap() []error }
	_, err = NewDocument(Info{Title: "t", Version: "1"}, []tools.Declaration{{Name: "x"}})
	if !errors.As(err, &joined) || len(joined.Unwrap()) != 1 {
		t.Errorf("error = %v, want one joined error", err)
	}
}
