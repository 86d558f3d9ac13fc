package opentool

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/devicectl/devicectl/tools"
	"github.com/google/jsonschema-go/jsonschema"
)

// SchemaDescriptionKeyword is the JSON Schema extension keyword that keeps
// a parameter's schema description apart from the parameter's own
// description, both of which would otherwise be the one "description" of
// the declaration's property. See the package documentation.
const SchemaDescriptionKeyword = "x-opentool-schema-description"

// defsPrefix is where Declaration puts shared schemas.
const defsPrefix = "#/$defs/"

// Declaration returns the device declaration of f, a function of d (its
// references are resolved in d.Schemas), with main_type remote and the
// given sub_type, which OpenTool does not describe.
//
// The parameters become one object schema: a property per parameter, in
// parameter order (Schema.PropertyOrder), described by the rule in the
// package documentation, and "required" listing the required parameters in
// the same order. The shared schemas that f reaches, directly or through
// one another, become "$defs" entries, referenced as "#/$defs/<name>", so
// recursive schemas stay recursive. f.Return is dropped: a declaration has
// no place for it.
//
// f and d.Schemas are checked as Validate checks them first, so that the
// result is accepted by tools.Registry.Add whenever name, description and
// sub are.
func (d *Document) Declaration(f *Function, sub tools.SubType) (tools.Declaration, error) {
	if f == nil {
		return tools.Declaration{}, fmt.Errorf("opentool: Declaration(nil)")
	}
	if d == nil {
		d = &Document{}
	}
	c := checker{doc: d, problems: &problems{}}
	c.function("", f)
	c.schemas()
	if err := c.err(); err != nil {
		return tools.Declaration{}, fmt.Errorf("opentool: function %s: %w", quote(f.Name), err)
	}
	params := &jsonschema.Schema{
		Type:          "object",
		Properties:    make(map[string]*jsonschema.Schema, len(f.Parameters)),
		PropertyOrder: make([]string, 0, len(f.Parameters)),
	}
	for _, p := range f.Parameters {
		prop := toJSONSchema(p.Schema)
		describeProperty(prop, p.Description, p.Schema.Description)
		params.Properties[p.Name] = prop
		params.PropertyOrder = append(params.PropertyOrder, p.Name)
		if p.Required {
			params.Required = append(params.Required, p.Name)
		}
	}
	if names := d.reachable(f); len(names) > 0 {
		params.Defs = make(map[string]*jsonschema.Schema, len(names))
		for _, name := range names {
			params.Defs[name] = toJSONSchema(d.Schemas[name])
		}
	}
	return tools.Declaration{
		Name:        f.Name,
		Description: f.Description,
		MainType:    tools.Remote,
		SubType:     sub,
		Parameters:  params,
	}, nil
}

// describeProperty applies the description rule to the property made from
// a parameter: see the package documentation.
func describeProperty(prop *jsonschema.Schema, param, schema string) {
	switch {
	case param != "" && schema != "":
		prop.Description = param
		setExtra(prop, SchemaDescriptionKeyword, schema)
	case schema != "":
		prop.Description = schema
		setExtra(prop, SchemaDescriptionKeyword, true)
	default:
		prop.Description = param
	}
}

func setExtra(s *jsonschema.Schema, k string, v any) {
	if s.Extra == nil {
		s.Extra = map[string]any{}
	}
	s.Extra[k] = v
}

// reachable returns, sorted, the names of the shared schemas that f's
// parameters refer to, directly or through other shared schemas.
func (d *Document) reachable(f *Function) []string {
	seen := map[string]bool{}
	var visit func(s *Schema)
	visit = func(s *Schema) {
		if s == nil {
			return
		}
		if name, ok := strings.CutPrefix(s.Ref, RefPrefix); ok && s.Ref != "" {
			if !seen[name] {
				seen[name] = true
				visit(d.Schemas[name])
			}
			return
		}
		for _, p := range s.Properties {
			visit(p)
		}
		visit(s.Items)
	}
	for _, p := range f.Parameters {
		visit(p.Schema)
	}
	return slices.Sorted(maps.Keys(seen))
}

// toJSONSchema converts a checked schema; the parameter-level description
// rule is the caller's.
func toJSONSchema(s *Schema) *jsonschema.Schema {
	out := &jsonschema.Schema{Description: s.Description}
	if name, ok := strings.CutPrefix(s.Ref, RefPrefix); ok && s.Ref != "" {
		out.Ref = defsPrefix + name
		return out
	}
	out.Type = s.Type
	if s.Properties != nil {
		out.Properties = make(map[string]*jsonschema.Schema, len(s.Properties))
		for k, p := range s.Properties {
			out.Properties[k] = toJSONSchema(p)
		}
	}
	if s.Items != nil {
		out.Items = toJSONSchema(s.Items)
	}
	if s.Enum != nil {
		out.Enum = make([]any, len(s.Enum))
		for i, v := range s.Enum {
			out.Enum[i] = enumValue(v)
		}
	}
	if s.Required != nil {
		out.Required = slices.Clone(s.Required)
	}
	return out
}

// enumValue turns a json.Number into the int64 (when it is one) or float64
// that the device decodes input numbers as, so that an enum value and the
// input it stands for compare equal the same way. Left a json.Number, it
// would be compared through big.Rat on every call, at a cost that grows
// with its exponent.
func enumValue(v any) any {
	n, ok := v.(json.Number)
	if !ok {
		return v
	}
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i
	}
	f, _ := strconv.ParseFloat(string(n), 64) // checked: finite
	return f
}
