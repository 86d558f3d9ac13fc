package opentool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/devicectl/devicectl/tools"
	"github.com/google/jsonschema-go/jsonschema"
)

// FunctionFromDeclaration describes a device tool as an OpenTool function,
// with the shared schemas its references need (its "$defs" reachable from
// the properties, referenced as "#/schemas/<name>"; nil when there are
// none). It is the reverse of Document.Declaration: for a function that
// Declaration converted, it gives back the same function, without Return,
// and the schemas the function reaches.
//
// Each property of the parameters becomes a parameter, in the schema's
// PropertyOrder (the struct's field order for tools.Func, the parameter
// order for Declaration) and then by name; a parameter is required when
// "required" lists it. Descriptions follow the rule in the package
// documentation.
//
// JSON Schema says more than OpenTool can. What can be said otherwise is:
//
//   - a nullable type (["string","null"], as tools.Func gives pointer
//     fields) becomes the non-null type, null leaves the enum, and the
//     description says "may be null";
//   - a schema without a type whose enum (or const) values are all of one
//     type gets that type (integer when all numbers are whole);
//   - const becomes an enum of one value;
//   - bounds, lengths, patterns, formats, defaults, "additionalProperties"
//     and the like are dropped, and a short note in the description keeps
//     their meaning for a reader: "(0 to 100)", "(pattern ^#[0-9a-f]{6}$)";
//     combinators (anyOf, allOf, not, ...) beside a type are noted as
//     "further constraints", to be found in the device's declaration;
//   - a title stands in for a missing description.
//
// Constraints on the parameters object itself have nowhere to go and are
// dropped.
//
// What cannot be said is an error naming the place: a property without a
// type or with several non-null types, an array without a single "items"
// schema, an enum of objects or arrays, a $ref other than to the
// parameters' own "$defs" or "definitions", or a $defs name that is not
// ^[a-zA-Z0-9_.-]{1,64}$. The caller leaves such a tool out of the
// documents it serves; it still works on the device.
func FunctionFromDeclaration(d tools.Declaration) (Function, map[string]*Schema, error) {
	fail := func(err error) (Function, map[string]*Schema, error) {
		return Function{}, nil, fmt.Errorf("opentool: tool %s: %w", quote(d.Name), err)
	}
	root := d.Parameters
	if root == nil {
		return fail(&PathError{Path: "parameters", Msg: "missing"})
	}
	if root.Type != TypeObject && !slices.Equal(root.Types, []string{TypeObject}) {
		return fail(&PathError{Path: "parameters", Msg: `type is not "object"`})
	}
	r := reverser{defs: root.Defs, defsKeyword: "$defs", wanted: map[string]bool{}}
	if root.Defs == nil && root.Definitions != nil {
		r.defs, r.defsKeyword = root.Definitions, "definitions"
	}
	required := map[string]bool{}
	for _, name := range root.Required {
		if _, ok := root.Properties[name]; !ok {
			return fail(&PathError{Path: "parameters.required", Msg: fmt.Sprintf("%s names no property: OpenTool lists required parameters only", quote(name))})
		}
		required[name] = true
	}
	f := Function{Name: d.Name, Description: d.Description, Parameters: []Parameter{}}
	for _, name := range propertyOrder(root) {
		prop := root.Properties[name]
		path := keyPath("parameters.properties", name)
		s, err := r.schema(path, prop)
		if err != nil {
			return fail(err)
		}
		p := Parameter{Name: name, Schema: s, Required: required[name]}
		// Undo describeProperty. true means "description" is the schema's
		// and the parameter had none.
		if ext := prop.Extra[SchemaDescriptionKeyword]; ext != true {
			p.Description, s.Description = s.Description, ""
			if text, ok := ext.(string); ok {
				s.Description = text
			}
		}
		f.Parameters = append(f.Parameters, p)
	}
	schemas, err := r.shared()
	if err != nil {
		return fail(err)
	}
	// What the conversion did not catch (an enum value of the wrong type,
	// a nested "required" naming no property) the specification's rules
	// do.
	c := checker{doc: &Document{Schemas: schemas}, problems: &problems{}}
	c.function("", &f)
	c.schemas()
	if err := c.err(); err != nil {
		return fail(fmt.Errorf("the OpenTool form would be invalid: %w", err))
	}
	return f, schemas, nil
}

// propertyOrder returns the names of s's properties in its PropertyOrder,
// then the rest sorted: deterministic whatever built the schema.
func propertyOrder(s *jsonschema.Schema) []string {
	names := make([]string, 0, len(s.Properties))
	listed := map[string]bool{}
	for _, name := range s.PropertyOrder {
		if _, ok := s.Properties[name]; ok && !listed[name] {
			names = append(names, name)
			listed[name] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		if !listed[name] {
			names = append(names, name)
		}
	}
	return names
}

// reverser converts the schemas of one declaration.
type reverser struct {
	defs        map[string]*jsonschema.Schema
	defsKeyword string // "$defs", or draft-07's "definitions"
	// queue lists the defs referred to, in order of discovery; wanted
	// holds the same names.
	queue  []string
	wanted map[string]bool
	depth  int
}

// shared converts the wanted $defs, and those they want in turn.
func (r *reverser) shared() (map[string]*Schema, error) {
	if len(r.queue) == 0 {
		return nil, nil
	}
	out := map[string]*Schema{}
	for i := 0; i < len(r.queue); i++ { // r.queue grows
		name := r.queue[i]
		s, err := r.schema(keyPath("parameters."+r.defsKeyword, name), r.defs[name])
		if err != nil {
			return nil, err
		}
		out[name] = s
	}
	return out, nil
}

func (r *reverser) schema(path string, s *jsonschema.Schema) (*Schema, error) {
	if s == nil {
		return nil, &PathError{Path: path, Msg: "missing"}
	}
	if r.depth >= maxSchemaDepth {
		return nil, &PathError{Path: path, Msg: fmt.Sprintf("schemas nest more than %d levels deep", maxSchemaDepth)}
	}
	r.depth++
	defer func() { r.depth-- }()
	desc := s.Description
	if desc == "" {
		desc = s.Title
	}
	out := &Schema{}
	if s.Ref != "" {
		name, err := r.ref(s.Ref)
		if err != nil {
			return nil, &PathError{Path: path, Msg: err.Error()}
		}
		out.Ref = RefPrefix + name
		out.Description = withNotes(desc, notes(s))
		return out, nil
	}
	typ, nullable, err := typeOf(s)
	if err != nil {
		return nil, &PathError{Path: path, Msg: err.Error()}
	}
	out.Type = typ
	switch typ {
	case TypeObject:
		out.Properties = make(map[string]*Schema, len(s.Properties))
		// In order, so that the same declaration fails the same way.
		for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
			ps, err := r.schema(keyPath(joinPath(path, "properties"), name), s.Properties[name])
			if err != nil {
				return nil, err
			}
			out.Properties[name] = ps
		}
		if s.Required != nil {
			out.Required = slices.Clone(s.Required)
		}
	case TypeArray:
		if s.Items == nil {
			return nil, &PathError{Path: path, Msg: `an array without a single "items" schema cannot be expressed`}
		}
		items, err := r.schema(joinPath(path, "items"), s.Items)
		if err != nil {
			return nil, err
		}
		out.Items = items
	}
	values := s.Enum
	if values == nil && s.Const != nil {
		values = []any{*s.Const}
	}
	for _, v := range values {
		if v == nil && nullable {
			continue
		}
		out.Enum = append(out.Enum, toEnumValue(v))
	}
	var ns []string
	if nullable {
		ns = append(ns, "may be null")
	}
	out.Description = withNotes(desc, append(ns, notes(s)...))
	return out, nil
}

// ref returns the $defs name a reference names.
func (r *reverser) ref(ref string) (string, error) {
	name, ok := strings.CutPrefix(ref, "#/"+r.defsKeyword+"/")
	if !ok || r.defs[name] == nil {
		return "", fmt.Errorf("$ref %s cannot be expressed: only references to the parameters' own %s are", quote(ref), r.defsKeyword)
	}
	compilePatterns()
	if !schemaName.MatchString(name) {
		return "", fmt.Errorf("$ref %s: the name does not match %s", quote(ref), schemaName)
	}
	if !r.wanted[name] {
		r.wanted[name] = true
		r.queue = append(r.queue, name)
	}
	return name, nil
}

// typeOf returns the one OpenTool type of s, and whether s also admits
// null.
func typeOf(s *jsonschema.Schema) (typ string, nullable bool, err error) {
	switch {
	case s.Type != "":
		typ = s.Type
	case s.Types != nil:
		var others []string
		for _, t := range s.Types {
			if t == "null" {
				nullable = true
			} else {
				others = append(others, t)
			}
		}
		if len(others) != 1 {
			return "", false, fmt.Errorf("type %s cannot be expressed: OpenTool has one type per schema", typesString(s.Types))
		}
		typ = others[0]
	default:
		values := s.Enum
		if values == nil && s.Const != nil {
			values = []any{*s.Const}
		}
		typ, nullable = inferType(values)
		if typ == "" {
			return "", false, fmt.Errorf("no type: OpenTool needs one of %s", typeList)
		}
	}
	if !validType(typ) {
		return "", false, fmt.Errorf("type %s cannot be expressed: OpenTool has %s", quote(typ), typeList)
	}
	return typ, nullable, nil
}

func typesString(ts []string) string {
	b, _ := json.Marshal(ts)
	return string(b)
}

// inferType returns the type all non-null values share, or "".
func inferType(values []any) (typ string, nullable bool) {
	whole := true
	for _, v := range values {
		var t string
		switch v.(type) {
		case nil:
			nullable = true
			continue
		case string:
			t = TypeString
		case bool:
			t = TypeBoolean
		default:
			f, ok, msg := number(v)
			if !ok || msg != "" {
				return "", false
			}
			t = TypeNumber
			whole = whole && f == math.Trunc(f)
		}
		if typ != "" && typ != t {
			return "", false
		}
		typ = t
	}
	if typ == TypeNumber && whole {
		typ = TypeInteger
	}
	return typ, nullable
}

// toEnumValue writes numbers as json.Number, as Parse reads them.
func toEnumValue(v any) any {
	switch n := v.(type) {
	case json.Number, string, bool, nil:
		return v
	case float64:
		return floatNumber(n)
	case float32:
		return floatNumber(float64(n))
	}
	if f, ok, msg := number(v); ok && msg == "" {
		switch n := v.(type) {
		case uint, uint8, uint16, uint32, uint64, uintptr:
			return json.Number(fmt.Sprint(n))
		}
		if f == math.Trunc(f) {
			return json.Number(fmt.Sprint(v))
		}
	}
	return v // not a number: Validate names it
}

func floatNumber(f float64) any {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return f // Validate names it
	}
	if f == math.Trunc(f) && math.Abs(f) < 1<<63 {
		return json.Number(strconv.FormatInt(int64(f), 10))
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
}

// withNotes appends notes to a description: "Volume (0 to 100)".
func withNotes(desc string, notes []string) string {
	if len(notes) == 0 {
		return desc
	}
	n := "(" + strings.Join(notes, "; ") + ")"
	if desc == "" {
		return n
	}
	return desc + " " + n
}

// notes describes, for a human, the keywords of s that OpenTool cannot
// carry. A "type" beside a $ref is dropped silently: the reference says it.
func notes(s *jsonschema.Schema) []string {
	var ns []string
	if r := span(s.Minimum, s.Maximum, ""); r != "" {
		ns = append(ns, r)
	}
	if s.ExclusiveMinimum != nil {
		ns = append(ns, "more than "+num(*s.ExclusiveMinimum))
	}
	if s.ExclusiveMaximum != nil {
		ns = append(ns, "less than "+num(*s.ExclusiveMaximum))
	}
	if s.MultipleOf != nil {
		ns = append(ns, "multiple of "+num(*s.MultipleOf))
	}
	if r := span(intPtr(s.MinLength), intPtr(s.MaxLength), " characters"); r != "" {
		ns = append(ns, r)
	}
	if s.Pattern != "" {
		ns = append(ns, "pattern "+s.Pattern)
	}
	if s.Format != "" {
		ns = append(ns, "format "+s.Format)
	}
	if r := span(intPtr(s.MinItems), intPtr(s.MaxItems), " items"); r != "" {
		ns = append(ns, r)
	}
	if s.UniqueItems {
		ns = append(ns, "unique items")
	}
	if r := span(intPtr(s.MinProperties), intPtr(s.MaxProperties), " properties"); r != "" {
		ns = append(ns, r)
	}
	if ap := s.AdditionalProperties; ap != nil {
		switch {
		case isSchema(ap, "false"):
			ns = append(ns, "no other properties")
		case isSchema(ap, "true"):
		case ap.Type != "":
			ns = append(ns, "other properties: "+ap.Type)
		default:
			ns = append(ns, "other properties allowed")
		}
	}
	if len(s.Default) > 0 {
		var buf bytes.Buffer
		if json.Compact(&buf, s.Default) == nil && buf.Len() <= 40 {
			ns = append(ns, "default "+buf.String())
		}
	}
	if s.Deprecated {
		ns = append(ns, "deprecated")
	}
	if s.Const != nil && s.Enum != nil {
		// const became the enum only when there was none.
		ns = append(ns, "must be "+jsonText(*s.Const))
	}
	var more []string
	for _, k := range []struct {
		name string
		set  bool
	}{
		{"allOf", s.AllOf != nil}, {"anyOf", s.AnyOf != nil}, {"oneOf", s.OneOf != nil},
		{"not", s.Not != nil}, {"if", s.If != nil},
		{"patternProperties", s.PatternProperties != nil}, {"propertyNames", s.PropertyNames != nil},
		{"dependentRequired", s.DependentRequired != nil}, {"dependentSchemas", s.DependentSchemas != nil || s.DependencySchemas != nil || s.DependencyStrings != nil},
		{"prefixItems", s.PrefixItems != nil || s.ItemsArray != nil}, {"contains", s.Contains != nil},
		{"unevaluatedProperties", s.UnevaluatedProperties != nil}, {"unevaluatedItems", s.UnevaluatedItems != nil},
	} {
		if k.set {
			more = append(more, k.name)
		}
	}
	if len(more) > 0 {
		ns = append(ns, "further constraints: "+strings.Join(more, ", "))
	}
	return ns
}

// span words a pair of bounds: "0 to 100", "at least 1 items".
func span(lo, hi *float64, unit string) string {
	switch {
	case lo != nil && hi != nil:
		return num(*lo) + " to " + num(*hi) + unit
	case lo != nil:
		return "at least " + num(*lo) + unit
	case hi != nil:
		return "at most " + num(*hi) + unit
	}
	return ""
}

func intPtr(p *int) *float64 {
	if p == nil {
		return nil
	}
	f := float64(*p)
	return &f
}

func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// isSchema reports whether s marshals as text ("true" or "false"): that is
// how jsonschema-go tells the boolean schemas apart from the others.
func isSchema(s *jsonschema.Schema, text string) bool {
	b, err := json.Marshal(s)
	return err == nil && string(b) == text
}
