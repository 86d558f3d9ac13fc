package opentool

import (
	"encoding/json"
	"strconv"
	"strings"
)

// SpecVersion is the version of the OpenTool specification this package
// writes (NewDocument). A document with a Server is only fully understood
// by 1.1.0 readers; older ones ignore it.
const SpecVersion = "1.0.0"

// RefPrefix starts every reference to a shared schema: {"$ref":
// "#/schemas/Point"} stands for Document.Schemas["Point"].
const RefPrefix = "#/schemas/"

// The schema types of the specification.
const (
	TypeBoolean = "boolean"
	TypeInteger = "integer"
	TypeNumber  = "number"
	TypeString  = "string"
	TypeArray   = "array"
	TypeObject  = "object"
)

// Document is an OpenTool document (the spec's "OpenTool object").
type Document struct {
	// OpenTool is the version of the specification the document follows:
	// "1.x" or "1.x.y".
	OpenTool string `json:"opentool"`
	Info     Info   `json:"info"`
	// Server says where the functions are served (specification 1.1.0).
	Server *Server `json:"server,omitempty"`
	// Functions is required; a nil slice is written as [].
	Functions []Function `json:"functions"`
	// Schemas are shared schemas, referenced as {"$ref":"#/schemas/<name>"}.
	// omitzero rather than omitempty so that {} survives a round trip.
	Schemas map[string]*Schema `json:"schemas,omitzero"`
}

// Info describes the document.
type Info struct {
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
	Version     string `json:"version"`
}

// Server is where a tool server is reached (specification 1.1.0).
type Server struct {
	// URL is absolute, http or https.
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
}

// Function is one callable function.
type Function struct {
	// Name matches ^[a-zA-Z0-9_-]{1,64}$ and is unique in the document.
	Name string `json:"name"`
	// Description is required: a model decides from it when to call the
	// function.
	Description string `json:"description"`
	// Parameters is required; a nil slice is written as [].
	Parameters []Parameter `json:"parameters"`
	// Return is nil when the function returns nothing. A device declaration
	// has no place for it, so Declaration drops it.
	Return *Return `json:"return,omitempty"`
}

// Parameter is one named input of a function.
type Parameter struct {
	Name        string  `json:"name"`
	Description string  `json:"description,omitempty"`
	Schema      *Schema `json:"schema"`
	// Required is always written, false included: the specification makes
	// the field mandatory and SDK readers expect it.
	Required bool `json:"required"`
}

// Return describes what a function returns.
type Return struct {
	Name        string  `json:"name"`
	Description string  `json:"description,omitempty"`
	Schema      *Schema `json:"schema"`
}

// Schema is the specification's small subset of JSON Schema, plus $ref to a
// shared schema.
//
// A reference schema has Ref set and nothing else but, optionally,
// Description. Any other schema has a Type; Properties and Required only
// for "object", Items (required) only for "array", and Enum only for the
// scalar types, with values of that type: string, bool, or a number
// (json.Number as Parse decodes them, or any Go integer or float).
type Schema struct {
	Ref         string `json:"$ref,omitempty"`
	Type        string `json:"type,omitempty"`
	Description string `json:"description,omitempty"`
	// Properties: nil and empty both mean an object with any properties,
	// but only a non-nil map is written, as the specification wants for
	// objects; Parse fills in an empty map when an object has none.
	Properties map[string]*Schema `json:"properties,omitzero"`
	Items      *Schema            `json:"items,omitempty"`
	Enum       []any              `json:"enum,omitzero"`
	Required   []string           `json:"required,omitzero"`
}

// MarshalJSON writes a nil Functions as [], since readers require the
// field. The value receiver makes it apply to Document values too.
func (d Document) MarshalJSON() ([]byte, error) {
	type plain Document // without this method
	p := plain(d)
	if p.Functions == nil {
		p.Functions = []Function{}
	}
	return json.Marshal(p)
}

// MarshalJSON writes a nil Parameters as [], since readers require the
// field.
func (f Function) MarshalJSON() ([]byte, error) {
	type plain Function
	p := plain(f)
	if p.Parameters == nil {
		p.Parameters = []Parameter{}
	}
	return json.Marshal(p)
}

// Function returns the function named name, or nil.
func (d *Document) Function(name string) *Function {
	for i := range d.Functions {
		if d.Functions[i].Name == name {
			return &d.Functions[i]
		}
	}
	return nil
}

// PathError is one problem of a document, at a JSON path such as
// functions[2].parameters[0].schema.items.type or schemas.Point.properties.x.
// Map keys that are not plain names are quoted: schemas["a b"].
type PathError struct {
	Path string // "" for the document as a whole
	Msg  string
}

func (e *PathError) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// joinPath appends a known field name.
func joinPath(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

// keyPath appends a map key chosen by the document's author, quoted unless
// it is a plain name, so that a path stays unambiguous.
func keyPath(path, key string) string {
	if plainKey(key) {
		return joinPath(path, key)
	}
	return path + "[" + quote(key) + "]"
}

func indexPath(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}

func plainKey(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

func quote(s string) string { return strconv.Quote(s) }

// typeList is the spec's type enum, for messages.
var typeList = strings.Join([]string{TypeBoolean, TypeInteger, TypeNumber, TypeString, TypeArray, TypeObject}, ", ")

func validType(t string) bool {
	switch t {
	case TypeBoolean, TypeInteger, TypeNumber, TypeString, TypeArray, TypeObject:
		return true
	}
	return false
}
