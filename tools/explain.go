package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// This file turns jsonschema-go's validation errors into ParamsError
// details a server developer can act on.
//
// jsonschema-go reports the first failure as a chain of wrapped errors,
// one per schema entered, each reading "validating <where>: ", where
// <where> is "root" or a JSON Pointer into the schema
// ("/properties/level"), ending with "<keyword>: <detail>", e.g.
//
//	validating root: validating /properties/level: maximum: 150/1 is greater than 100.000000
//
// It names schema locations, not instance locations, and prints values with
// Go formatting. explain walks the schema pointers and the instance
// together to find the offending value and its path, then words the
// keyword's failure itself from the schema and the value:
//
//	tool_input.level: 150 is greater than the maximum 100
//
// Anything it does not recognise is passed through after the path, so a new
// message upstream degrades to less polished wording, never to nothing.

// explain returns the Details for err, the result of validating instance
// against root.
func explain(root *jsonschema.Schema, instance any, err error) string {
	pointers, leaf := unwrapChain(err)
	loc := locate(root, instance, pointers)
	return instancePath(loc.at) + ": " + loc.describe(leaf)
}

// unwrapChain splits a validation error into the schema locations it went
// through (outermost first) and the innermost message.
func unwrapChain(err error) (pointers []string, leaf string) {
	for {
		inner := errors.Unwrap(err)
		if inner == nil {
			break
		}
		where, ok := strings.CutPrefix(err.Error(), "validating ")
		if ok {
			where, ok = strings.CutSuffix(where, ": "+inner.Error())
		}
		if !ok {
			break
		}
		pointers = append(pointers, where)
		err = inner
	}
	return pointers, err.Error()
}

// location is where in the schema and the instance validation failed.
type location struct {
	root   *jsonschema.Schema
	schema *jsonschema.Schema // the schema whose keyword failed
	value  any                // the instance value it failed on
	at     []string           // path segments from tool_input to value
	// lost is set when the walk could not follow the error (a $ref to
	// another document, a keyword it does not know): schema, value and at
	// then describe an ancestor of the offending value.
	lost bool
}

// locate follows the schema pointers of a validation error from the root
// schema and instance down to the failing schema and value.
func locate(root *jsonschema.Schema, instance any, pointers []string) *location {
	loc := &location{root: root, schema: root, value: instance}
	prev := "" // the pointer of loc.schema; "" is the root
	// pointers[0] is the root itself ("root", or its $id).
	for i := 1; i < len(pointers); i++ {
		p := pointers[i]
		if p == "root" { // a $ref to "#": recursion
			loc.schema, prev = root, ""
			continue
		}
		if !strings.HasPrefix(p, "/") {
			loc.lost = true // a schema with its own $id: no pointer to follow
			break
		}
		var ok bool
		if rest, child := strings.CutPrefix(p, prev+"/"); child {
			ok = loc.descend(prev, splitPointer(rest), true)
		} else {
			// A $ref: the schema changes, the instance does not.
			s := loc.schema
			loc.schema = root
			ok = loc.descend("", splitPointer(p[1:]), false)
			if !ok {
				loc.schema = s
			}
		}
		if !ok {
			loc.lost = true
			break
		}
		prev = p
	}
	return loc
}

func splitPointer(p string) []string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return segs
}

// descend moves loc through the schema keywords in segs. When withValue is
// set, keywords that apply to a part of the instance (properties, items, ...)
// move to that part too; for a $ref target (withValue false) only the schema
// moves. It reports false when it cannot follow.
func (loc *location) descend(from string, segs []string, withValue bool) bool {
	s := loc.schema
	for i := 0; i < len(segs); i++ {
		// here is the pointer of the schema reached so far (after arg).
		here := func() string {
			p := from
			for _, seg := range segs[:i+1] {
				p += "/" + escapePointer(seg)
			}
			return p
		}
		kw := segs[i]
		arg := func() (string, bool) {
			if i+1 >= len(segs) {
				return "", false
			}
			i++
			return segs[i], true
		}
		argIndex := func(list []*jsonschema.Schema) (*jsonschema.Schema, int, bool) {
			a, ok := arg()
			if !ok {
				return nil, 0, false
			}
			n, err := strconv.Atoi(a)
			if err != nil || n < 0 || n >= len(list) {
				return nil, 0, false
			}
			return list[n], n, true
		}
		argKey := func(m map[string]*jsonschema.Schema) (*jsonschema.Schema, string, bool) {
			a, ok := arg()
			if !ok {
				return nil, "", false
			}
			c, ok := m[a]
			return c, a, ok
		}

		var (
			child *jsonschema.Schema
			ok    bool
		)
		switch kw {
		case "properties":
			var name string
			if child, name, ok = argKey(s.Properties); ok && withValue {
				ok = loc.toKey(name)
			}
		case "patternProperties":
			var re string
			if child, re, ok = argKey(s.PatternProperties); ok && withValue {
				rx, err := regexp.Compile(re)
				ok = err == nil && loc.toFailingKey(here(), func(k string) bool { return rx.MatchString(k) })
			}
		case "additionalProperties":
			if child, ok = s.AdditionalProperties, s.AdditionalProperties != nil; ok && withValue {
				ok = loc.toFailingKey(here(), func(k string) bool { return !declared(s, k) })
			}
		case "unevaluatedProperties":
			if child, ok = s.UnevaluatedProperties, s.UnevaluatedProperties != nil; ok && withValue {
				ok = loc.toFailingKey(here(), func(string) bool { return true })
			}
		case "items":
			if s.ItemsArray != nil { // draft-07 tuple form
				var n int
				if child, n, ok = argIndex(s.ItemsArray); ok && withValue {
					ok = loc.toIndex(n)
				}
			} else if child, ok = s.Items, s.Items != nil; ok && withValue {
				ok = loc.toFailingIndex(here(), len(s.PrefixItems))
			}
		case "prefixItems":
			var n int
			if child, n, ok = argIndex(s.PrefixItems); ok && withValue {
				ok = loc.toIndex(n)
			}
		case "additionalItems":
			if child, ok = s.AdditionalItems, s.AdditionalItems != nil; ok && withValue {
				ok = loc.toFailingIndex(here(), len(s.ItemsArray))
			}
		case "unevaluatedItems":
			if child, ok = s.UnevaluatedItems, s.UnevaluatedItems != nil; ok && withValue {
				ok = loc.toFailingIndex(here(), 0)
			}
		case "allOf":
			child, _, ok = argIndex(s.AllOf)
		case "anyOf":
			child, _, ok = argIndex(s.AnyOf)
		case "oneOf":
			child, _, ok = argIndex(s.OneOf)
		case "not":
			child, ok = s.Not, s.Not != nil
		case "if":
			child, ok = s.If, s.If != nil
		case "then":
			child, ok = s.Then, s.Then != nil
		case "else":
			child, ok = s.Else, s.Else != nil
		case "dependentSchemas":
			child, _, ok = argKey(s.DependentSchemas)
		case "dependencies":
			child, _, ok = argKey(s.DependencySchemas)
		case "$defs":
			child, _, ok = argKey(s.Defs)
		case "definitions":
			child, _, ok = argKey(s.Definitions)
		}
		if !ok || child == nil {
			return false
		}
		s = child
		loc.schema = s
	}
	return true
}

// declared reports whether s names property k (properties or
// patternProperties): the ones additionalProperties does not apply to.
func declared(s *jsonschema.Schema, k string) bool {
	if _, ok := s.Properties[k]; ok {
		return true
	}
	for re := range s.PatternProperties {
		if rx, err := regexp.Compile(re); err == nil && rx.MatchString(k) {
			return true
		}
	}
	return false
}

func (loc *location) toKey(k string) bool {
	m, ok := loc.value.(map[string]any)
	if !ok {
		return false
	}
	v, ok := m[k]
	if !ok {
		return false
	}
	loc.value = v
	loc.at = append(loc.at, keySegment(k))
	return true
}

func (loc *location) toIndex(n int) bool {
	a, ok := loc.value.([]any)
	if !ok || n >= len(a) {
		return false
	}
	loc.value = a[n]
	loc.at = append(loc.at, indexSegment(n))
	return true
}

// toFailingKey moves to the first property (in sorted order) among those
// selected by applies whose value fails the schema at pointer child.
// jsonschema-go does not say which one failed, so this asks that schema.
func (loc *location) toFailingKey(child string, applies func(string) bool) bool {
	m, ok := loc.value.(map[string]any)
	if !ok {
		return false
	}
	rs := loc.validatorFor(child)
	if rs == nil {
		return false
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if applies(k) && rs.Validate(m[k]) != nil {
			return loc.toKey(k)
		}
	}
	return false
}

// toFailingIndex is toFailingKey for array items from index start on.
func (loc *location) toFailingIndex(child string, start int) bool {
	a, ok := loc.value.([]any)
	if !ok {
		return false
	}
	rs := loc.validatorFor(child)
	if rs == nil {
		return false
	}
	for i := start; i < len(a); i++ {
		if rs.Validate(a[i]) != nil {
			return loc.toIndex(i)
		}
	}
	return false
}

// validatorFor returns a validator for the schema at pointer ptr of the
// root, or nil. The schema is validated in the context of the whole root, so
// that its references keep their meaning: the root is embedded under an $id
// of its own in a wrapper whose $ref points at ptr inside it. (The root's
// references are all local, "#..." pointers, see checkTree, so they resolve
// against the embedded copy.)
func (loc *location) validatorFor(ptr string) *jsonschema.Resolved {
	const id = "urn:devicectl:tool-parameters"
	inner := loc.root.CloneSchemas()
	inner.ID = id
	inner.Schema = ""
	wrapper := &jsonschema.Schema{
		Schema: loc.root.Schema, // keep the root's draft
		Ref:    id + (&url.URL{Fragment: ptr}).String(),
		Defs:   map[string]*jsonschema.Schema{"parameters": inner},
	}
	rs, err := wrapper.Resolve(nil)
	if err != nil {
		return nil
	}
	return rs
}

// describe words the failure of the leaf message's keyword at loc.
func (loc *location) describe(leaf string) string {
	if first, _, multi := strings.Cut(leaf, "\n"); multi {
		leaf = first
	}
	if loc.lost {
		return leaf
	}
	s, v := loc.schema, loc.value
	kw, _, _ := strings.Cut(leaf, ": ")
	val := render(v)
	switch kw {
	case "type":
		want := s.Types
		if s.Type != "" {
			want = []string{s.Type}
		}
		got := jsonType(v)
		switch {
		case got == "number" && slices.Equal(want, []string{"integer"}):
			return val + " is not an integer"
		case got == "null":
			return "null is not " + orList(want)
		default:
			return fmt.Sprintf("%s is %s, not %s", val, withArticle(got), orList(want))
		}
	case "enum":
		vals := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			if str, ok := e.(string); ok {
				vals[i] = str
			} else {
				vals[i] = render(e)
			}
		}
		return fmt.Sprintf("%s is not one of %s", val, strings.Join(vals, ", "))
	case "const":
		if s.Const != nil {
			return fmt.Sprintf("%s is not %s", val, render(*s.Const))
		}
	case "minimum":
		return bound(val, "is less than the minimum", s.Minimum)
	case "maximum":
		return bound(val, "is greater than the maximum", s.Maximum)
	case "exclusiveMinimum":
		return bound(val, "is not greater than", s.ExclusiveMinimum)
	case "exclusiveMaximum":
		return bound(val, "is not less than", s.ExclusiveMaximum)
	case "multipleOf":
		return bound(val, "is not a multiple of", s.MultipleOf)
	case "minLength":
		if s.MinLength != nil {
			return fmt.Sprintf("%s is shorter than the minimum length %d", val, *s.MinLength)
		}
	case "maxLength":
		if s.MaxLength != nil {
			return fmt.Sprintf("%s is longer than the maximum length %d", val, *s.MaxLength)
		}
	case "pattern":
		return fmt.Sprintf("%s does not match the pattern %q", val, s.Pattern)
	case "minItems", "maxItems":
		if a, ok := v.([]any); ok && s.MinItems != nil && len(a) < *s.MinItems {
			return fmt.Sprintf("has %d items, fewer than the minimum %d", len(a), *s.MinItems)
		} else if ok && s.MaxItems != nil && len(a) > *s.MaxItems {
			return fmt.Sprintf("has %d items, more than the maximum %d", len(a), *s.MaxItems)
		}
	case "minProperties", "maxProperties":
		if m, ok := v.(map[string]any); ok && s.MinProperties != nil && len(m) < *s.MinProperties {
			return fmt.Sprintf("has %d properties, fewer than the minimum %d", len(m), *s.MinProperties)
		} else if ok && s.MaxProperties != nil && len(m) > *s.MaxProperties {
			return fmt.Sprintf("has %d properties, more than the maximum %d", len(m), *s.MaxProperties)
		}
	case "required":
		if m, ok := v.(map[string]any); ok {
			var missing []string
			for _, r := range s.Required {
				if _, ok := m[r]; !ok {
					missing = append(missing, strconv.Quote(r))
				}
			}
			switch len(missing) {
			case 0:
			case 1:
				return "missing required property " + missing[0]
			default:
				return "missing required properties " + strings.Join(missing, ", ")
			}
		}
	case "anyOf":
		return val + " does not match any of the allowed forms"
	case "oneOf":
		if strings.HasPrefix(leaf, "oneOf: validated against both") {
			return val + " matches more than one of the allowed forms"
		}
		return val + " does not match any of the allowed forms"
	case "not":
		return val + " matches a form that is not allowed"
	}
	if strings.HasPrefix(leaf, "unexpected additional properties") {
		if msg := unknownProperties(s, v); msg != "" {
			return msg
		}
	}
	return leaf
}

// unknownProperties words an additionalProperties: false failure, listing
// what the schema does accept so that the sender can correct itself.
func unknownProperties(s *jsonschema.Schema, v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	var extra []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !declared(s, k) {
			extra = append(extra, strconv.Quote(abbreviate(k)))
		}
	}
	var msg string
	switch n := len(extra); {
	case n == 0:
		return ""
	case n == 1:
		msg = "unknown property " + extra[0]
	case n > maxListed:
		msg = fmt.Sprintf("unknown properties %s and %d more", strings.Join(extra[:maxListed], ", "), n-maxListed)
	default:
		msg = "unknown properties " + strings.Join(extra, ", ")
	}
	switch known := slices.Sorted(maps.Keys(s.Properties)); {
	case len(known) > 0:
		msg += " (known: " + strings.Join(known, ", ") + ")"
	case len(s.PatternProperties) == 0:
		msg += " (takes no properties)"
	}
	return msg
}

func bound(val, relation string, limit *float64) string {
	if limit == nil {
		return val + " " + relation + " the limit"
	}
	return val + " " + relation + " " + formatNumber(*limit)
}

// jsonType is the JSON Schema type of a decoded value, as jsonschema-go
// sees it (an integral float64 is an integer).
func jsonType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case int64:
		return "integer"
	case float64:
		if v == math.Trunc(v) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func withArticle(typ string) string {
	switch typ {
	case "null":
		return "null"
	case "integer", "object", "array":
		return "an " + typ
	}
	return "a " + typ
}

// orList words a list of types: "an integer", "null or a string".
func orList(types []string) string {
	ws := make([]string, len(types))
	for i, t := range types {
		ws[i] = withArticle(t)
	}
	if len(ws) <= 1 {
		return strings.Join(ws, "")
	}
	return strings.Join(ws[:len(ws)-1], ", ") + " or " + ws[len(ws)-1]
}

// render writes a decoded value as compact JSON, abbreviated.
func render(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return abbreviate(fmt.Sprint(v))
	}
	return abbreviate(strings.TrimSuffix(buf.String(), "\n"))
}

// Details stay short whatever the sender put in the input.
const (
	maxShown  = 64 // bytes of a value or key shown
	maxListed = 5  // unknown properties listed
)

func abbreviate(s string) string {
	if len(s) <= maxShown {
		return s
	}
	cut := maxShown - 3
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// keySegment is the path step to property k: ".level", or `["my key"]`
// when k is not an identifier.
func keySegment(k string) string {
	if identifier.MatchString(k) {
		return "." + k
	}
	return "[" + strconv.Quote(abbreviate(k)) + "]"
}

func indexSegment(i int) string { return "[" + strconv.Itoa(i) + "]" }

// instancePath joins segments into a path that starts at tool_input, the
// name the server's developer sent the input under.
func instancePath(segs []string) string {
	return "tool_input" + strings.Join(segs, "")
}
