package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// resolve checks a tool's parameters and prepares them for validation.
//
// It resolves a private clone: jsonschema-go requires that a schema not
// change after Resolve (its resolved form is keyed by the *Schema pointers
// of the tree), and the caller still holds the original.
func resolve(params *jsonschema.Schema) (*parameters, error) {
	if params == nil {
		return nil, errors.New(`parameters are missing (a tool without inputs declares {"type":"object","properties":{}})`)
	}
	switch {
	case params.Type == "object":
	case params.Type != "":
		return nil, fmt.Errorf(`parameters: type is %q, want "object" (tool_input is always an object)`, params.Type)
	case params.Types != nil:
		return nil, fmt.Errorf(`parameters: type is %q, want "object" (tool_input is always an object)`, params.Types)
	default:
		return nil, errors.New(`parameters: type is missing, want "object"`)
	}
	switch params.Schema {
	case "", "https://json-schema.org/draft/2020-12/schema",
		"http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft-07/schema#":
	default:
		return nil, fmt.Errorf("parameters: $schema %q is not draft-07 or draft 2020-12", params.Schema)
	}
	// The declaration goes on the wire: a schema that cannot be marshalled
	// (e.g. both Type and Types set) would only fail at registration time.
	if _, err := json.Marshal(params); err != nil {
		return nil, fmt.Errorf("parameters: %w", err)
	}
	rs, err := params.CloneSchemas().Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("parameters: %w", err)
	}
	// Resolve has checked that the schemas form a tree without nils, so
	// walks over it terminate.
	refs, err := checkTree(rs.Schema())
	if err != nil {
		return nil, fmt.Errorf("parameters%w", err)
	}
	switch rs.Schema().Schema {
	case "http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft-07/schema#":
		return &parameters{Resolved: rs, refs: refs, draft7: true}, nil
	}
	return &parameters{Resolved: rs, refs: refs}, nil
}

var jsonTypes = map[string]bool{
	"null": true, "boolean": true, "object": true, "array": true,
	"number": true, "string": true, "integer": true,
}

// sameInstance lists the keywords whose schemas apply to the same value as
// their parent (as opposed to properties, items, ..., which apply to a part
// of it). A loop through these and $ref never reaches a smaller value.
var sameInstance = map[string]bool{
	"allOf": true, "anyOf": true, "oneOf": true, "not": true,
	"if": true, "then": true, "else": true,
	"dependentSchemas": true, "dependencies": true,
}

// node is one schema of a parameters tree.
type node struct {
	s    *jsonschema.Schema
	base string   // pointer of the schema a "#..." reference in s is relative to
	next []string // pointers of the schemas validated against the same value
}

// checkTree catches what jsonschema-go accepts but cannot validate:
//
//   - a type name that is not a JSON type (a typo would reject every input);
//   - a reference other than a local JSON Pointer ("#", "#/$defs/x"):
//     anchors, other documents and $dynamicRef are not supported, so that
//     the next check can be exact;
//   - a loop of references that never moves to a part of the input, such
//     as {"allOf":[{"$ref":"#"}]}: jsonschema-go would recurse until the
//     stack overflows, which no recover can catch.
//
// Its errors start with the pointer of the offending schema ("/properties/x:
// ..."), or ": " for the root. It returns the schema each $ref points at.
func checkTree(root *jsonschema.Schema) (map[*jsonschema.Schema]*jsonschema.Schema, error) {
	nodes := map[string]*node{}
	var problem error
	walkSchemas(root, "", func(ptr, parent, keyword string, s *jsonschema.Schema) bool {
		n := &node{s: s, base: ptr}
		if p := nodes[parent]; p != nil {
			if s.ID == "" {
				n.base = p.base
			}
			if sameInstance[keyword] {
				p.next = append(p.next, ptr)
			}
		}
		nodes[ptr] = n
		types := s.Types
		if s.Type != "" {
			types = []string{s.Type}
		}
		for _, t := range types {
			if !jsonTypes[t] {
				problem = fmt.Errorf("%s: type %q is not one of null, boolean, object, array, number, string, integer", ptr, t)
				return false
			}
		}
		if s.DynamicRef != "" {
			problem = fmt.Errorf("%s: $dynamicRef is not supported in tool parameters", ptr)
			return false
		}
		return true
	})
	if problem != nil {
		return nil, problem
	}
	refs := map[*jsonschema.Schema]*jsonschema.Schema{}
	for _, ptr := range slices.Sorted(maps.Keys(nodes)) {
		n := nodes[ptr]
		if n.s.Ref == "" {
			continue
		}
		u, err := url.Parse(n.s.Ref)
		if err != nil || u.Scheme != "" || u.Host != "" || u.Path != "" || u.RawQuery != "" ||
			!strings.HasPrefix(n.s.Ref, "#") || (u.Fragment != "" && !strings.HasPrefix(u.Fragment, "/")) {
			return nil, fmt.Errorf(`%s: $ref %q: only local references ("#" or "#/...") are supported in tool parameters`, ptr, n.s.Ref)
		}
		target := n.base + u.Fragment
		if nodes[target] == nil {
			return nil, fmt.Errorf("%s: $ref %q: no such schema", ptr, n.s.Ref)
		}
		n.next = append(n.next, target)
		refs[n.s] = nodes[target].s
	}
	// Depth-first search for a cycle in the same-value graph.
	const (
		unseen = iota
		active
		done
	)
	state := map[string]int{}
	var visit func(ptr string) error
	visit = func(ptr string) error {
		switch state[ptr] {
		case active:
			return fmt.Errorf("%s: references loop back here without moving into the input (validation would never end)", ptr)
		case done:
			return nil
		}
		state[ptr] = active
		for _, next := range nodes[ptr].next {
			if err := visit(next); err != nil {
				return err
			}
		}
		state[ptr] = done
		return nil
	}
	for _, ptr := range slices.Sorted(maps.Keys(nodes)) {
		if err := visit(ptr); err != nil {
			return nil, err
		}
	}
	return refs, nil
}

var (
	schemaPtrType   = reflect.TypeFor[*jsonschema.Schema]()
	schemaSliceType = reflect.TypeFor[[]*jsonschema.Schema]()
	schemaMapType   = reflect.TypeFor[map[string]*jsonschema.Schema]()
)

// walkSchemas calls f for s and every schema under it, preorder, with the
// JSON Pointer of each ("" for s), that of its parent, and the keyword it
// is under. It stops when f returns false. It finds the children by
// reflection, as jsonschema-go does, so that a keyword added upstream is not
// silently skipped. s must be a tree without nils (a resolved schema).
func walkSchemas(s *jsonschema.Schema, ptr string, f func(ptr, parent, keyword string, s *jsonschema.Schema) bool) bool {
	var walk func(s *jsonschema.Schema, ptr, parent, keyword string) bool
	walk = func(s *jsonschema.Schema, ptr, parent, keyword string) bool {
		if !f(ptr, parent, keyword, s) {
			return false
		}
		v := reflect.ValueOf(s).Elem()
		t := v.Type()
		for i := range t.NumField() {
			sf := t.Field(i)
			fv := v.Field(i)
			kw := keywordOf(sf)
			switch sf.Type {
			case schemaPtrType:
				if c := fv.Interface().(*jsonschema.Schema); c != nil {
					if !walk(c, ptr+"/"+kw, ptr, kw) {
						return false
					}
				}
			case schemaSliceType:
				for j, c := range fv.Interface().([]*jsonschema.Schema) {
					if !walk(c, ptr+"/"+kw+"/"+strconv.Itoa(j), ptr, kw) {
						return false
					}
				}
			case schemaMapType:
				m := fv.Interface().(map[string]*jsonschema.Schema)
				for _, k := range slices.Sorted(maps.Keys(m)) {
					if !walk(m[k], ptr+"/"+kw+"/"+escapePointer(k), ptr, kw) {
						return false
					}
				}
			}
		}
		return true
	}
	return walk(s, ptr, "\x00none", "")
}

// keywordOf returns the JSON Schema keyword of a Schema field.
func keywordOf(sf reflect.StructField) string {
	switch sf.Name {
	case "Items", "ItemsArray":
		return "items"
	case "DependencySchemas":
		return "dependencies"
	}
	name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
	if name == "" || name == "-" {
		return sf.Name
	}
	return name
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
