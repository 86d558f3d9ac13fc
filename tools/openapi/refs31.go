package openapi

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/url"
	"reflect"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"go.yaml.in/yaml/v3"
)

// OpenAPI 3.1 documents use parts of JSON Schema 2020-12 and of OpenAPI
// 3.1 that kin-openapi does not read: schemas referred to by their $id or
// $anchor instead of a JSON pointer (Swagger Petstore 3.1 does so),
// components.pathItems, and webhooks. rewrite31 turns such a document into
// one kin-openapi reads, with the same operations and schemas, before it is
// handed over.

// maxInline bounds how deep path items that refer to path items are
// inlined: deeper is a cycle.
const maxInline = 32

// Inlining path items may copy copyFactor times the document's nodes, plus
// copyAllowance: generous for path items used many times, and small enough
// that aliases cannot make a small document fill a device's memory.
const (
	copyFactor    = 10
	copyAllowance = 100_000
)

// valueKeywords hold instance values (examples, defaults), not schemas: a
// "$ref" or "$id" member inside them is data and is left alone. (A Media
// Type's examples is a map of Example objects, which is walked.)
var valueKeywords = map[string]bool{"example": true, "examples": true, "default": true, "const": true, "enum": true}

// nameMaps are the objects whose keys are names or status codes, never
// keywords: a property named "default" and the default response are
// walked like any other.
var nameMaps = map[string]bool{
	"properties": true, "patternProperties": true, "$defs": true, "definitions": true, "dependentSchemas": true,
	"schemas": true, "responses": true, "parameters": true, "requestBodies": true, "headers": true,
	"securitySchemes": true, "links": true, "callbacks": true, "pathItems": true, "paths": true,
	"webhooks": true, "content": true, "encoding": true, "variables": true,
}

// skipValue reports whether the member k: v of an object that is not a
// name map holds instance values.
func skipValue(k string, v *yaml.Node) bool {
	return valueKeywords[k] && !(k == "examples" && v.Kind == yaml.MappingNode)
}

// rewrite31 returns data with, for an OpenAPI 3.1 document:
//
//   - every $ref that names a schema of the document by its $id, a $anchor,
//     or a JSON pointer inside a schema that has an $id, replaced by the
//     JSON pointer of that schema from the document's root;
//   - every reference to components.pathItems replaced by a copy of the
//     path item (the referring object's own fields win), and
//     components.pathItems removed;
//   - webhooks removed: they are requests the API sends, not operations a
//     tool can call.
//
// base is the document's URL, against which relative $ids are resolved;
// nil for a document given as data. A document that needs none of this is
// returned as it is, and changed is false.
func rewrite31(data []byte, base *url.URL, log *slog.Logger) (out []byte, changed bool, err error) {
	if !slices.ContainsFunc([]string{"$id", "$anchor", "$dynamicAnchor", "pathItems", "webhooks"}, func(s string) bool {
		return bytes.Contains(data, []byte(s))
	}) {
		return data, false, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		// Not for here to say what is wrong: kin-openapi will.
		return data, false, nil
	}
	root := doc.Content[0]
	if v := member(root, "openapi"); v == nil || !strings.HasPrefix(v.Value, "3.1") {
		return data, false, nil
	}
	if base == nil {
		base = &url.URL{Scheme: "file", Path: "/openapi-document"}
	}
	r := &rewriter{root: root, docBase: withoutFragment(base), resources: map[string]string{}, anchors: map[string]string{}, byName: map[string][]string{}}
	// Webhooks go first, so that nothing in them (a path item or an
	// anchor that is not there) can stop the document from loading.
	if hooks := member(root, "webhooks"); hooks != nil {
		var names []string
		for i := 0; i+1 < len(hooks.Content); i += 2 {
			names = append(names, hooks.Content[i].Value)
		}
		log.Debug("webhooks ignored: they are requests the API sends, not operations to call", "webhooks", names)
		removeMember(root, "webhooks")
		r.changed = true
	}
	r.resources[r.docBase] = ""
	r.index(root, "", r.docBase, false)
	if err := r.rewriteRefs(root, "", r.docBase, "", false); err != nil {
		return nil, false, err
	}
	if comps := member(root, "components"); comps != nil && member(comps, "pathItems") != nil {
		if err := r.inlinePathItems(root, 0); err != nil {
			return nil, false, err
		}
		removeMember(comps, "pathItems")
		r.changed = true
	}
	if !r.changed {
		return data, false, nil
	}
	out, err = yaml.Marshal(&doc)
	if err != nil {
		return nil, false, fmt.Errorf("rewriting the 3.1 document: %w", err)
	}
	return out, true, nil
}

type rewriter struct {
	root    *yaml.Node
	docBase string
	// resources maps the absolute URI of each schema with an $id (and of
	// the document) to its JSON pointer.
	resources map[string]string
	// anchors maps "<resource URI>#<anchor>" to the anchored schema's
	// JSON pointer.
	anchors map[string]string
	// byName maps each anchor name to the pointers of the schemas that
	// have it, wherever they are: "#name" written in the document for an
	// anchor inside a schema with an $id is found when it is the only one.
	byName  map[string][]string
	changed bool
	nodes   int // nodes of the document, outside aliases
	copied  int // nodes deepCopy made
}

// index records the $id and $anchor of every object under n, at pointer
// ptr, with base the URI relative $ids resolve against.
func (r *rewriter) index(n *yaml.Node, ptr, base string, names bool) {
	r.nodes++
	switch n.Kind {
	case yaml.MappingNode:
		if !names {
			if id := scalarMember(n, "$id"); id != "" {
				if u, err := resolve(base, id); err == nil {
					base = withoutFragment(u)
					r.resources[base] = ptr
				}
			}
			for _, k := range []string{"$anchor", "$dynamicAnchor"} {
				if a := scalarMember(n, k); a != "" {
					r.anchors[base+"#"+a] = ptr
					r.byName[a] = append(r.byName[a], ptr)
				}
			}
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			if !names && skipValue(k, n.Content[i+1]) {
				continue
			}
			r.index(n.Content[i+1], ptr+"/"+escapePointer(k), base, !names && nameMaps[k])
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			r.index(c, fmt.Sprintf("%s/%d", ptr, i), base, false)
		}
	}
}

// rewriteRefs replaces the $refs under n that index can resolve. resource
// is the pointer of the innermost schema with an $id ("" for the
// document).
func (r *rewriter) rewriteRefs(n *yaml.Node, ptr, base, resource string, names bool) error {
	switch n.Kind {
	case yaml.MappingNode:
		if !names {
			if id := scalarMember(n, "$id"); id != "" {
				if u, err := resolve(base, id); err == nil {
					base = withoutFragment(u)
					resource = ptr
				}
			}
			if ref := member(n, "$ref"); ref != nil && ref.Kind == yaml.ScalarNode {
				target, err := r.target(ref.Value, base, resource)
				if err != nil {
					return fmt.Errorf("%s: $ref %q: %w", displayPointer(ptr), ref.Value, err)
				}
				if target != ref.Value {
					ref.Value, ref.Style = target, yaml.DoubleQuotedStyle
					r.changed = true
				}
			}
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			if !names && skipValue(k, n.Content[i+1]) {
				continue
			}
			if err := r.rewriteRefs(n.Content[i+1], ptr+"/"+escapePointer(k), base, resource, !names && nameMaps[k]); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if err := r.rewriteRefs(c, fmt.Sprintf("%s/%d", ptr, i), base, resource, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// target returns what a $ref should say: "#<pointer>" for a schema of the
// document, or ref itself for what is not (another document).
func (r *rewriter) target(ref, base, resource string) (string, error) {
	if strings.HasPrefix(ref, "#/") {
		// A pointer is relative to the schema resource it is in; authors
		// of OpenAPI documents usually mean the document, so the
		// resource is only tried when it has the place.
		if resource != "" && lookup(r.root, resource+ref[1:]) != nil {
			return "#" + resource + ref[1:], nil
		}
		return ref, nil
	}
	u, err := resolve(base, ref)
	if err != nil {
		return "", err
	}
	uri, frag := withoutFragment(u), u.Fragment
	ptr, ok := r.resources[uri]
	if !ok {
		return ref, nil // another document: kin-openapi reads it, if allowed
	}
	switch {
	case frag == "":
		return "#" + ptr, nil
	case strings.HasPrefix(frag, "/"):
		if lookup(r.root, ptr+frag) == nil {
			return "", fmt.Errorf("nothing at %s in the schema %s", frag, displayPointer(ptr))
		}
		return "#" + ptr + frag, nil
	}
	if a, ok := r.anchors[uri+"#"+frag]; ok {
		return "#" + a, nil
	}
	if all := r.byName[frag]; uri == r.docBase && len(all) == 1 {
		return "#" + all[0], nil
	}
	return "", fmt.Errorf("no schema has $anchor %q in %s", frag, displayPointer(ptr))
}

// inlinePathItems replaces each object under n whose $ref points into
// components.pathItems by a copy of what it points to.
func (r *rewriter) inlinePathItems(n *yaml.Node, depth int) error {
	switch n.Kind {
	case yaml.MappingNode:
		if ref := member(n, "$ref"); ref != nil && ref.Kind == yaml.ScalarNode && strings.HasPrefix(ref.Value, "#/components/pathItems/") {
			if depth >= maxInline {
				return fmt.Errorf("$ref %q: path items refer to each other in a cycle", ref.Value)
			}
			t := lookup(r.root, ref.Value[1:])
			if t == nil {
				return fmt.Errorf("$ref %q: no such path item", ref.Value)
			}
			c, err := r.deepCopy(t)
			if err != nil {
				return err
			}
			if err := r.inlinePathItems(c, depth+1); err != nil {
				return err
			}
			// The referring object's own fields (summary, description)
			// replace the referred ones.
			merged := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			if c.Kind == yaml.MappingNode {
				for i := 0; i+1 < len(c.Content); i += 2 {
					if member(n, c.Content[i].Value) == nil {
						merged.Content = append(merged.Content, c.Content[i], c.Content[i+1])
					}
				}
			} else {
				merged = c
			}
			for i := 0; i+1 < len(n.Content) && merged.Kind == yaml.MappingNode; i += 2 {
				if n.Content[i].Value != "$ref" {
					merged.Content = append(merged.Content, n.Content[i], n.Content[i+1])
				}
			}
			merged.Anchor = n.Anchor // aliases of the referring object stay valid
			*n = *merged
			return nil
		}
		for i := 1; i < len(n.Content); i += 2 {
			if err := r.inlinePathItems(n.Content[i], depth); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			if err := r.inlinePathItems(c, depth); err != nil {
				return err
			}
		}
	}
	return nil
}

// member returns the value of key in mapping n, or nil.
func member(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func scalarMember(n *yaml.Node, key string) string {
	if v := member(n, key); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

func removeMember(n *yaml.Node, key string) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			n.Content = slices.Delete(n.Content, i, i+2)
			return
		}
	}
}

// lookup follows a JSON pointer ("/components/schemas/Pet") from n.
func lookup(n *yaml.Node, ptr string) *yaml.Node {
	if ptr == "" {
		return n
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch n.Kind {
		case yaml.MappingNode:
			n = member(n, tok)
		case yaml.SequenceNode:
			i := -1
			if _, err := fmt.Sscan(tok, &i); err != nil || i < 0 || i >= len(n.Content) {
				return nil
			}
			n = n.Content[i]
		default:
			return nil
		}
		if n == nil {
			return nil
		}
	}
	return n
}

func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// displayPointer is a pointer as errors show it.
func displayPointer(ptr string) string {
	if ptr == "" {
		return "the document"
	}
	return "#" + ptr
}

func resolve(base, ref string) (*url.URL, error) {
	b, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(ref)
	if err != nil {
		return nil, err
	}
	return b.ResolveReference(u), nil
}

func withoutFragment(u *url.URL) string {
	c := *u
	c.Fragment, c.RawFragment = "", ""
	return c.String()
}

// deepCopy copies a node tree for inlining. Aliases are expanded and the
// copy's anchors dropped: the copy moves before its anchors in the
// document, where an alias could not refer to them, and must not define an
// anchor twice. The nodes copied in all are bounded (see copyFactor), so
// that aliases cannot make a small document large.
func (r *rewriter) deepCopy(n *yaml.Node) (*yaml.Node, error) {
	if r.copied++; r.copied > copyFactor*r.nodes+copyAllowance {
		return nil, fmt.Errorf("inlining path items copies more than %d nodes: excessive aliasing?", copyFactor*r.nodes+copyAllowance)
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return r.deepCopy(n.Alias)
	}
	c := *n
	c.Anchor = ""
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, x := range n.Content {
		var err error
		if c.Content[i], err = r.deepCopy(x); err != nil {
			return nil, err
		}
	}
	return &c, nil
}

var schemaType = reflect.TypeFor[openapi3.Schema]()

// dropUnknownKeywords removes from every schema of a 3.1 document the
// keywords kin-openapi does not know, which it keeps as extensions and
// then refuses unless they start with "x-". JSON Schema 2020-12 allows
// them (they are annotations, and OpenAPI's own examples use some), and
// they say nothing a tool's input schema needs.
func dropUnknownKeywords(doc *openapi3.T) {
	seen := map[uintptr]bool{}
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() || seen[v.Pointer()] {
				return
			}
			seen[v.Pointer()] = true
			if v.Elem().Type() == schemaType {
				s := v.Interface().(*openapi3.Schema)
				for k := range s.Extensions {
					if !strings.HasPrefix(k, "x-") {
						delete(s.Extensions, k)
					}
				}
			}
			// Paths, Responses and Callback keep their entries in an
			// unexported map, which Map returns.
			if m := v.MethodByName("Map"); m.IsValid() && m.Type().NumIn() == 0 && m.Type().NumOut() == 1 && m.Type().Out(0).Kind() == reflect.Map {
				walk(m.Call(nil)[0])
			}
			walk(v.Elem())
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				if v.Type().Field(i).IsExported() {
					walk(v.Field(i))
				}
			}
		case reflect.Slice:
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i))
			}
		case reflect.Map:
			if v.Type().Elem().Kind() == reflect.Interface {
				return // extensions and examples: values, not schemas
			}
			for it := v.MapRange(); it.Next(); {
				walk(it.Value())
			}
		}
	}
	walk(reflect.ValueOf(doc))
}
