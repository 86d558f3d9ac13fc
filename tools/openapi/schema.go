package openapi

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/jsonschema-go/jsonschema"
)

// maxNodes bounds the schemas of one tool. References that are not
// recursive are expanded in place, which is what a model reads best, but a
// document that shares schemas deeply can expand exponentially.
const maxNodes = 5000

// converter turns kin-openapi schemas, whose references the loader has
// already resolved into a graph of pointers, into one jsonschema-go tree
// per tool. A schema reached again while it is being converted is
// recursive: it moves to the tool's $defs and every use of it becomes a
// "#/$defs/<name>" reference. Other references are expanded in place.
type converter struct {
	active  map[*openapi3.Schema]bool
	defName map[*openapi3.Schema]string
	defs    map[string]*jsonschema.Schema
	nodes   int
	err     error
}

func newConverter() *converter {
	return &converter{
		active:  map[*openapi3.Schema]bool{},
		defName: map[*openapi3.Schema]string{},
		defs:    map[string]*jsonschema.Schema{},
	}
}

// finish reports a failure of any conversion and puts the $defs at the
// root, where the references point.
func (c *converter) finish(root *jsonschema.Schema) error {
	if c.err != nil {
		return c.err
	}
	if len(c.defs) > 0 {
		root.Defs = c.defs
	}
	return nil
}

// convert returns the schema of ref, or the schema that accepts anything
// for a missing one.
func (c *converter) convert(ref *openapi3.SchemaRef) *jsonschema.Schema {
	if ref == nil || ref.Value == nil {
		return &jsonschema.Schema{}
	}
	v := ref.Value
	if name, ok := c.defName[v]; ok {
		return &jsonschema.Schema{Ref: "#/$defs/" + name}
	}
	if c.active[v] {
		name := c.newDefName(ref.Ref)
		c.defName[v] = name
		return &jsonschema.Schema{Ref: "#/$defs/" + name}
	}
	c.active[v] = true
	s := c.schema(v)
	delete(c.active, v)
	if name, ok := c.defName[v]; ok {
		c.defs[name] = s
		return &jsonschema.Schema{Ref: "#/$defs/" + name}
	}
	return s
}

var defNameInvalid = regexp.MustCompile(`[^a-zA-Z0-9._-]+`)

// newDefName names a $defs entry after the component the reference points
// to ("#/components/schemas/Node" -> "Node"), with characters that JSON
// Pointer or a reader would stumble on replaced.
func (c *converter) newDefName(ref string) string {
	_, frag, _ := strings.Cut(ref, "#")
	last := frag[strings.LastIndex(frag, "/")+1:]
	last = strings.ReplaceAll(strings.ReplaceAll(last, "~1", "/"), "~0", "~")
	base := strings.Trim(defNameInvalid.ReplaceAllString(last, "_"), "_")
	if base == "" {
		base = "schema"
	}
	name := base
	for i := 2; c.nameTaken(name); i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	return name
}

func (c *converter) nameTaken(name string) bool {
	for _, n := range c.defName {
		if n == name {
			return true
		}
	}
	return false
}

func (c *converter) list(refs openapi3.SchemaRefs) []*jsonschema.Schema {
	if len(refs) == 0 {
		return nil
	}
	out := make([]*jsonschema.Schema, len(refs))
	for i, r := range refs {
		out[i] = c.convert(r)
	}
	return out
}

func (c *converter) dict(m openapi3.Schemas, keep func(string, *openapi3.SchemaRef) bool) map[string]*jsonschema.Schema {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]*jsonschema.Schema, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if keep == nil || keep(k, m[k]) {
			out[k] = c.convert(m[k])
		}
	}
	return out
}

func (c *converter) optional(ref *openapi3.SchemaRef) *jsonschema.Schema {
	if ref == nil {
		return nil
	}
	return c.convert(ref)
}

func (c *converter) boolSchema(b openapi3.BoolSchema) *jsonschema.Schema {
	switch {
	case b.Has != nil && *b.Has:
		return &jsonschema.Schema{}
	case b.Has != nil:
		return &jsonschema.Schema{Not: &jsonschema.Schema{}}
	case b.Schema != nil:
		return c.convert(b.Schema)
	}
	return nil
}

// schema converts one schema. What is kept, mapped and dropped:
//
//   - JSON Schema keywords kin-openapi knows, for 3.0 and 3.1, are kept.
//   - 3.0's nullable adds "null" to the types (and to an enum); with no
//     type, around allOf/anyOf/oneOf, the schema becomes
//     anyOf [{"type":"null"}, schema].
//   - 3.0's boolean exclusiveMinimum/exclusiveMaximum turn minimum/maximum
//     into 2020-12's numeric exclusiveMinimum/exclusiveMaximum.
//   - 3.0's example becomes examples: [example].
//   - Properties marked readOnly are removed, with their required entry:
//     OpenAPI says they are not sent in requests.
//   - format is kept as an annotation; jsonschema-go does not check it.
//   - A pattern Go's regexp cannot compile is moved into the description,
//     as the registry would refuse it; the server still checks it.
//   - discriminator, xml, externalDocs, x- extensions and allowEmptyValue
//     are dropped: they describe the document, not valid input.
//   - $id, $anchor, $dynamicRef, $dynamicAnchor, $schema and nested $defs
//     are dropped: references are resolved before conversion.
//   - 3.1's const: null cannot be told from no const by kin-openapi and
//     is lost.
func (c *converter) schema(v *openapi3.Schema) *jsonschema.Schema {
	c.nodes++
	if c.nodes > maxNodes {
		if c.err == nil {
			c.err = fmt.Errorf("the input schema has more than %d nodes once its references are expanded", maxNodes)
		}
		return &jsonschema.Schema{}
	}
	if v.Always != nil {
		if *v.Always {
			return &jsonschema.Schema{}
		}
		return &jsonschema.Schema{Not: &jsonschema.Schema{}}
	}
	s := &jsonschema.Schema{
		Title:            v.Title,
		Description:      v.Description,
		Format:           v.Format,
		Deprecated:       v.Deprecated,
		WriteOnly:        v.WriteOnly,
		MultipleOf:       clonePtr(v.MultipleOf),
		Minimum:          clonePtr(v.Min),
		Maximum:          clonePtr(v.Max),
		MinLength:        intPtr(v.MinLength),
		MaxLength:        uintPtr(v.MaxLength),
		UniqueItems:      v.UniqueItems,
		MinItems:         intPtr(v.MinItems),
		MaxItems:         uintPtr(v.MaxItems),
		MinContains:      uintPtr(v.MinContains),
		MaxContains:      uintPtr(v.MaxContains),
		MinProperties:    intPtr(v.MinProps),
		MaxProperties:    uintPtr(v.MaxProps),
		ContentEncoding:  v.ContentEncoding,
		ContentMediaType: v.ContentMediaType,
	}

	types := slices.Clone(v.Type.Slice())
	if v.Nullable && len(types) > 0 && !slices.Contains(types, openapi3.TypeNull) {
		types = append(types, openapi3.TypeNull)
	}
	switch len(types) {
	case 0:
	case 1:
		s.Type = types[0]
	default:
		s.Types = types
	}
	if len(v.Enum) > 0 {
		s.Enum = slices.Clone(v.Enum)
		if v.Nullable && !slices.Contains(s.Enum, nil) {
			s.Enum = append(s.Enum, nil)
		}
	}
	if v.Const != nil {
		k := v.Const
		s.Const = &k
	}
	if v.Default != nil {
		if b, err := json.Marshal(v.Default); err == nil {
			s.Default = b
		}
	}
	switch {
	case len(v.Examples) > 0:
		s.Examples = slices.Clone(v.Examples)
	case v.Example != nil:
		s.Examples = []any{v.Example}
	}

	switch {
	case v.ExclusiveMin.Value != nil:
		s.ExclusiveMinimum = clonePtr(v.ExclusiveMin.Value)
	case v.ExclusiveMin.IsTrue() && v.Min != nil:
		s.ExclusiveMinimum, s.Minimum = s.Minimum, nil
	}
	switch {
	case v.ExclusiveMax.Value != nil:
		s.ExclusiveMaximum = clonePtr(v.ExclusiveMax.Value)
	case v.ExclusiveMax.IsTrue() && v.Max != nil:
		s.ExclusiveMaximum, s.Maximum = s.Maximum, nil
	}

	if v.Pattern != "" {
		if _, err := regexp.Compile(v.Pattern); err == nil {
			s.Pattern = v.Pattern
		} else {
			s.Description = strings.TrimSpace(s.Description + "\nMust match the pattern " + v.Pattern)
		}
	}

	s.Items = c.optional(v.Items)
	s.PrefixItems = c.list(v.PrefixItems)
	s.Contains = c.optional(v.Contains)
	s.UnevaluatedItems = c.boolSchema(v.UnevaluatedItems)

	readOnly := map[string]bool{}
	s.Properties = c.dict(v.Properties, func(name string, p *openapi3.SchemaRef) bool {
		if p != nil && p.Value != nil && p.Value.ReadOnly {
			readOnly[name] = true
			return false
		}
		return true
	})
	for _, r := range v.Required {
		if !readOnly[r] {
			s.Required = append(s.Required, r)
		}
	}
	s.AdditionalProperties = c.boolSchema(v.AdditionalProperties)
	s.PatternProperties = c.dict(v.PatternProperties, func(pattern string, _ *openapi3.SchemaRef) bool {
		_, err := regexp.Compile(pattern)
		return err == nil
	})
	s.PropertyNames = c.optional(v.PropertyNames)
	s.UnevaluatedProperties = c.boolSchema(v.UnevaluatedProperties)
	if len(v.DependentRequired) > 0 {
		s.DependentRequired = make(map[string][]string, len(v.DependentRequired))
		for k, r := range v.DependentRequired {
			s.DependentRequired[k] = slices.Clone(r)
		}
	}
	s.DependentSchemas = c.dict(v.DependentSchemas, nil)

	s.AllOf = c.list(v.AllOf)
	s.AnyOf = c.list(v.AnyOf)
	s.OneOf = c.list(v.OneOf)
	s.Not = c.optional(v.Not)
	s.If = c.optional(v.If)
	s.Then = c.optional(v.Then)
	s.Else = c.optional(v.Else)
	s.ContentSchema = c.optional(v.ContentSchema)

	if v.Nullable && len(types) == 0 && (s.AllOf != nil || s.AnyOf != nil || s.OneOf != nil || s.Not != nil) {
		return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Type: openapi3.TypeNull}, s}}
	}
	return s
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// intPtr converts a count where 0 means absent; counts beyond int (a
// 32-bit int on ARM) are clamped, which no input can reach anyway.
func intPtr(n uint64) *int {
	if n == 0 {
		return nil
	}
	return uintPtr(&n)
}

func uintPtr(p *uint64) *int {
	if p == nil {
		return nil
	}
	n := int(min(*p, math.MaxInt))
	return &n
}
