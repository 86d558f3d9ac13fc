package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/big"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// This file turns a failed validation into ParamsError details a server
// developer can act on.
//
// jsonschema-go decides whether tool_input is valid, but its error is text
// for a log: it names schema locations, not the offending value, and prints
// values with Go formatting. So when it refuses, find walks the resolved
// schema and the instance together, keyword by keyword in the order
// jsonschema-go checks them, to the first failure, a schemaError holding the
// instance path, the keyword, the schema and the value. The details are
// worded from those fields alone:
//
//	tool_input.level: 150 is greater than the maximum 100
//
// The walk follows every keyword jsonschema-go validates in the schemas
// Add accepts (FuzzFind holds the two to the same verdict). Should they
// ever disagree, the details say the input does not match and quote
// jsonschema-go, rather than say nothing.

// parameters is a tool's schema resolved for validation, with what find
// needs to follow it.
type parameters struct {
	*jsonschema.Resolved
	refs   map[*jsonschema.Schema]*jsonschema.Schema // the target of each $ref
	draft7 bool                                      // $ref hides its siblings; items may be a list
}

// schemaError is the first keyword an instance fails.
type schemaError struct {
	at      []string           // path segments from tool_input to value
	keyword string             // as spelt in JSON Schema: "maximum", "required", ...
	schema  *jsonschema.Schema // the schema holding the keyword
	value   any                // the instance value it failed on

	names []string     // required, dependentRequired: missing; additionalProperties: unknown
	of    string       // dependentRequired: the property that requires names
	n, m  int          // oneOf: forms matched; contains: items matched; uniqueItems: equal items
	cause *schemaError // propertyNames: the property name's own failure
}

// explain returns the Details for err, jsonschema-go's refusal of instance.
func explain(p *parameters, instance any, err error) string {
	f := finder{parameters: p}
	e := f.find(p.Schema(), instance, nil)
	if e == nil { // the walk and jsonschema-go disagree: say so rather than nothing
		first, _, _ := strings.Cut(err.Error(), "\n")
		return instancePath(nil) + ": does not match the parameters: " + first
	}
	return e.details()
}

// finder walks a schema and an instance to the first failure.
type finder struct {
	*parameters
	patterns map[string]*regexp.Regexp
}

func (f *finder) pattern(p string) *regexp.Regexp {
	if rx, ok := f.patterns[p]; ok {
		return rx
	}
	rx, err := regexp.Compile(p) // jsonschema-go compiled it already
	if err != nil {
		rx = nil
	}
	if f.patterns == nil {
		f.patterns = map[string]*regexp.Regexp{}
	}
	f.patterns[p] = rx
	return rx
}

func (f *finder) valid(s *jsonschema.Schema, v any, at []string) bool { return f.find(s, v, at) == nil }

// find returns the first keyword of s that v, at path at, fails, or nil.
func (f *finder) find(s *jsonschema.Schema, v any, at []string) *schemaError {
	fail := func(kw string) *schemaError { return &schemaError{at: at, keyword: kw, schema: s, value: v} }
	if s.Ref != "" {
		if e := f.find(f.refs[s], v, at); e != nil {
			return e
		}
		if f.draft7 {
			return nil
		}
	}
	if s.Type != "" || s.Types != nil {
		want, got := typesOf(s), jsonType(v)
		if !slices.Contains(want, got) && !(got == "integer" && slices.Contains(want, "number")) {
			return fail("type")
		}
	}
	if s.Enum != nil && !slices.ContainsFunc(s.Enum, func(e any) bool { return jsonEqual(e, v) }) {
		return fail("enum")
	}
	if s.Const != nil && !jsonEqual(*s.Const, v) {
		return fail("const")
	}
	if e := f.findNumber(s, v, fail); e != nil {
		return e
	}
	if str, ok := v.(string); ok {
		n := utf8.RuneCountInString(str)
		switch {
		case s.MinLength != nil && n < *s.MinLength:
			return fail("minLength")
		case s.MaxLength != nil && n > *s.MaxLength:
			return fail("maxLength")
		case s.Pattern != "":
			if rx := f.pattern(s.Pattern); rx != nil && !rx.MatchString(str) {
				return fail("pattern")
			}
		}
	}
	for _, c := range s.AllOf {
		if e := f.find(c, v, at); e != nil {
			return e
		}
	}
	if s.AnyOf != nil && !slices.ContainsFunc(s.AnyOf, func(c *jsonschema.Schema) bool { return f.valid(c, v, at) }) {
		return fail("anyOf")
	}
	if s.OneOf != nil {
		n := 0
		for _, c := range s.OneOf {
			if f.valid(c, v, at) {
				n++
			}
		}
		if n != 1 {
			e := fail("oneOf")
			e.n = n
			return e
		}
	}
	if s.Not != nil && f.valid(s.Not, v, at) {
		return fail("not")
	}
	if s.If != nil {
		next := s.Else
		if f.valid(s.If, v, at) {
			next = s.Then
		}
		if next != nil {
			if e := f.find(next, v, at); e != nil {
				return e
			}
		}
	}
	switch v := v.(type) {
	case []any:
		return f.findArray(s, v, at, fail)
	case map[string]any:
		return f.findObject(s, v, at, fail)
	}
	return nil
}

func (f *finder) findNumber(s *jsonschema.Schema, v any, fail func(string) *schemaError) *schemaError {
	if s.MultipleOf == nil && s.Minimum == nil && s.Maximum == nil && s.ExclusiveMinimum == nil && s.ExclusiveMaximum == nil {
		return nil
	}
	r, ok := ratOf(v)
	if !ok {
		return nil
	}
	if s.MultipleOf != nil {
		nf, _ := r.Float64()
		if _, frac := math.Modf(nf / *s.MultipleOf); frac != 0 {
			return fail("multipleOf")
		}
	}
	cmp := func(limit float64) int { return r.Cmp(new(big.Rat).SetFloat64(limit)) }
	switch {
	case s.Minimum != nil && cmp(*s.Minimum) < 0:
		return fail("minimum")
	case s.Maximum != nil && cmp(*s.Maximum) > 0:
		return fail("maximum")
	case s.ExclusiveMinimum != nil && cmp(*s.ExclusiveMinimum) <= 0:
		return fail("exclusiveMinimum")
	case s.ExclusiveMaximum != nil && cmp(*s.ExclusiveMaximum) >= 0:
		return fail("exclusiveMaximum")
	}
	return nil
}

func (f *finder) findArray(s *jsonschema.Schema, a []any, at []string, fail func(string) *schemaError) *schemaError {
	each := func(c *jsonschema.Schema, from, to int) *schemaError {
		for i := from; i < min(to, len(a)); i++ {
			if e := f.find(c, a[i], with(at, indexSegment(i))); e != nil {
				return e
			}
		}
		return nil
	}
	var e *schemaError
	switch {
	case f.draft7 && s.ItemsArray != nil:
		for i, c := range s.ItemsArray {
			if e = each(c, i, i+1); e != nil {
				return e
			}
		}
		if s.AdditionalItems != nil {
			e = each(s.AdditionalItems, len(s.ItemsArray), len(a))
		}
	case f.draft7:
		if s.Items != nil {
			e = each(s.Items, 0, len(a))
		}
	default:
		for i, c := range s.PrefixItems {
			if e = each(c, i, i+1); e != nil {
				return e
			}
		}
		if s.Items != nil {
			e = each(s.Items, len(s.PrefixItems), len(a))
		}
	}
	if e != nil {
		return e
	}
	if s.Contains != nil {
		n := 0
		for i, x := range a {
			if f.valid(s.Contains, x, with(at, indexSegment(i))) {
				n++
			}
		}
		e := fail("contains")
		e.n = n
		switch {
		case n == 0 && (s.MinContains == nil || *s.MinContains > 0):
			return e
		case s.MinContains != nil && n < *s.MinContains:
			e.keyword = "minContains"
			return e
		case s.MaxContains != nil && n > *s.MaxContains:
			e.keyword = "maxContains"
			return e
		}
	}
	switch {
	case s.MinItems != nil && len(a) < *s.MinItems:
		return fail("minItems")
	case s.MaxItems != nil && len(a) > *s.MaxItems:
		return fail("maxItems")
	}
	if s.UniqueItems {
		if i, j, ok := equalItems(a); ok {
			e := fail("uniqueItems")
			e.n, e.m = i, j
			return e
		}
	}
	if s.UnevaluatedItems != nil {
		ev := evaluation{indexes: map[int]bool{}}
		f.evaluate(s, a, at, &ev, true)
		for i := ev.end; i < len(a) && !ev.all; i++ {
			if ev.indexes[i] {
				continue
			}
			if e := f.find(s.UnevaluatedItems, a[i], with(at, indexSegment(i))); e != nil {
				return e
			}
		}
	}
	return nil
}

func (f *finder) findObject(s *jsonschema.Schema, m map[string]any, at []string, fail func(string) *schemaError) *schemaError {
	keys := slices.Sorted(maps.Keys(m))
	evaluated := make(map[string]bool, len(m))
	for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
		if x, ok := m[k]; ok {
			if e := f.find(s.Properties[k], x, with(at, keySegment(k))); e != nil {
				return e
			}
			evaluated[k] = true
		}
	}
	if len(s.PatternProperties) > 0 {
		patterns := slices.Sorted(maps.Keys(s.PatternProperties))
		for _, k := range keys {
			for _, p := range patterns {
				if rx := f.pattern(p); rx != nil && rx.MatchString(k) {
					if e := f.find(s.PatternProperties[p], m[k], with(at, keySegment(k))); e != nil {
						return e
					}
					evaluated[k] = true
				}
			}
		}
	}
	if s.AdditionalProperties != nil {
		var extra []string
		for _, k := range keys {
			if !evaluated[k] {
				extra = append(extra, k)
			}
		}
		if isFalse(s.AdditionalProperties) && len(extra) > 0 {
			e := fail("additionalProperties")
			e.names = extra
			return e
		}
		for _, k := range extra {
			if e := f.find(s.AdditionalProperties, m[k], with(at, keySegment(k))); e != nil {
				return e
			}
		}
	}
	if s.PropertyNames != nil {
		for _, k := range keys {
			if cause := f.find(s.PropertyNames, k, at); cause != nil {
				e := fail("propertyNames")
				e.cause = cause
				return e
			}
		}
	}
	switch {
	case s.MinProperties != nil && len(m) < *s.MinProperties:
		return fail("minProperties")
	case s.MaxProperties != nil && len(m) > *s.MaxProperties:
		return fail("maxProperties")
	}
	missing := func(names []string) []string {
		var out []string
		for _, n := range names {
			if _, ok := m[n]; !ok {
				out = append(out, n)
			}
		}
		return out
	}
	if names := missing(s.Required); len(names) > 0 {
		e := fail("required")
		e.names = names
		return e
	}
	requires, schemas := s.DependentRequired, s.DependentSchemas
	if f.draft7 {
		requires, schemas = s.DependencyStrings, s.DependencySchemas
	}
	for _, k := range slices.Sorted(maps.Keys(requires)) {
		if _, ok := m[k]; !ok {
			continue
		}
		if names := missing(requires[k]); len(names) > 0 {
			e := fail("dependentRequired")
			e.names, e.of = names, k
			return e
		}
	}
	for _, k := range slices.Sorted(maps.Keys(schemas)) {
		if _, ok := m[k]; ok {
			if e := f.find(schemas[k], m, at); e != nil {
				return e
			}
		}
	}
	if s.UnevaluatedProperties != nil {
		ev := evaluation{props: map[string]bool{}}
		f.evaluate(s, m, at, &ev, true)
		var extra []string
		for _, k := range keys {
			if !ev.props[k] {
				extra = append(extra, k)
			}
		}
		if isFalse(s.UnevaluatedProperties) && len(extra) > 0 {
			e := fail("unevaluatedProperties")
			e.names = extra
			return e
		}
		for _, k := range extra {
			if e := f.find(s.UnevaluatedProperties, m[k], with(at, keySegment(k))); e != nil {
				return e
			}
		}
	}
	return nil
}

// evaluation is what a schema and the schemas applying in its place
// evaluate of an instance, as unevaluatedProperties and unevaluatedItems
// count it.
type evaluation struct {
	props   map[string]bool // properties
	all     bool            // every item
	end     int             // the items before end
	indexes map[int]bool    // items contains matched
}

// evaluate adds to ev what s evaluates of v, which is valid against s, and
// what the schemas applying to v in its place and valid for it evaluate. top
// is set for the schema whose unevaluated keyword asks.
func (f *finder) evaluate(s *jsonschema.Schema, v any, at []string, ev *evaluation, top bool) {
	if s.Ref != "" {
		f.evaluate(f.refs[s], v, at, ev, false)
		if f.draft7 {
			return
		}
	}
	switch v := v.(type) {
	case map[string]any:
		for k := range v {
			if _, ok := s.Properties[k]; ok || s.AdditionalProperties != nil || (s.UnevaluatedProperties != nil && !top) {
				ev.props[k] = true
				continue
			}
			for p := range s.PatternProperties {
				if rx := f.pattern(p); rx != nil && rx.MatchString(k) {
					ev.props[k] = true
				}
			}
		}
	case []any:
		switch {
		case f.draft7 && s.ItemsArray != nil:
			ev.end = max(ev.end, min(len(s.ItemsArray), len(v)))
			ev.all = ev.all || s.AdditionalItems != nil
		case f.draft7:
			ev.all = ev.all || s.Items != nil
		default:
			ev.end = max(ev.end, min(len(s.PrefixItems), len(v)))
			ev.all = ev.all || s.Items != nil
		}
		ev.all = ev.all || (s.UnevaluatedItems != nil && !top)
		if s.Contains != nil {
			for i, x := range v {
				if f.valid(s.Contains, x, with(at, indexSegment(i))) {
					ev.indexes[i] = true
				}
			}
		}
	}
	inPlace := slices.Concat(s.AllOf, s.AnyOf, s.OneOf)
	if s.If != nil {
		if f.valid(s.If, v, at) {
			inPlace = append(inPlace, s.If, s.Then)
		} else {
			inPlace = append(inPlace, s.Else)
		}
	}
	if m, ok := v.(map[string]any); ok {
		deps := s.DependentSchemas
		if f.draft7 {
			deps = s.DependencySchemas
		}
		for k, c := range deps {
			if _, ok := m[k]; ok {
				inPlace = append(inPlace, c)
			}
		}
	}
	for _, c := range inPlace {
		if c != nil && f.valid(c, v, at) {
			f.evaluate(c, v, at, ev, false)
		}
	}
}

// with returns at extended by seg, leaving at's array alone: sibling paths
// share their prefix.
func with(at []string, seg string) []string {
	return append(at[:len(at):len(at)], seg)
}

// isFalse reports whether s is the schema false, which jsonschema-go reads
// as {"not": {}}.
func isFalse(s *jsonschema.Schema) bool {
	return s.Not != nil && reflect.ValueOf(*s.Not).IsZero()
}

func typesOf(s *jsonschema.Schema) []string {
	if s.Type != "" {
		return []string{s.Type}
	}
	return s.Types
}

// details words e: the path to the value, then what is wrong with it.
func (e *schemaError) details() string {
	return instancePath(e.at) + ": " + e.describe()
}

// describe words what is wrong with e.value, without the path.
func (e *schemaError) describe() string {
	s, v := e.schema, e.value
	val := render(v)
	switch e.keyword {
	case "type":
		want, got := typesOf(s), jsonType(v)
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
		for i, x := range s.Enum {
			if str, ok := x.(string); ok {
				vals[i] = str
			} else {
				vals[i] = render(x)
			}
		}
		return fmt.Sprintf("%s is not one of %s", val, strings.Join(vals, ", "))
	case "const":
		return fmt.Sprintf("%s is not %s", val, render(*s.Const))
	case "minimum":
		return bound(val, "is less than the minimum", *s.Minimum)
	case "maximum":
		return bound(val, "is greater than the maximum", *s.Maximum)
	case "exclusiveMinimum":
		return bound(val, "is not greater than", *s.ExclusiveMinimum)
	case "exclusiveMaximum":
		return bound(val, "is not less than", *s.ExclusiveMaximum)
	case "multipleOf":
		return bound(val, "is not a multiple of", *s.MultipleOf)
	case "minLength":
		return fmt.Sprintf("%s is shorter than the minimum length %d", val, *s.MinLength)
	case "maxLength":
		return fmt.Sprintf("%s is longer than the maximum length %d", val, *s.MaxLength)
	case "pattern":
		return fmt.Sprintf("%s does not match the pattern %q", val, s.Pattern)
	case "anyOf":
		return val + " does not match any of the allowed forms"
	case "oneOf":
		if e.n > 1 {
			return val + " matches more than one of the allowed forms"
		}
		return val + " does not match any of the allowed forms"
	case "not":
		if isFalse(s) {
			return val + " is not allowed"
		}
		return val + " matches a form that is not allowed"
	case "contains":
		return "has no item of the required form"
	case "minContains":
		return fmt.Sprintf("has %s of the required form, fewer than the minimum %d", count(e.n, "item"), *s.MinContains)
	case "maxContains":
		return fmt.Sprintf("has %s of the required form, more than the maximum %d", count(e.n, "item"), *s.MaxContains)
	case "minItems":
		return fmt.Sprintf("has %s, fewer than the minimum %d", count(len(v.([]any)), "item"), *s.MinItems)
	case "maxItems":
		return fmt.Sprintf("has %s, more than the maximum %d", count(len(v.([]any)), "item"), *s.MaxItems)
	case "uniqueItems":
		return fmt.Sprintf("items %d and %d are equal (items must be unique)", e.n, e.m)
	case "additionalProperties":
		return unknownProperties(s, e.names)
	case "unevaluatedProperties":
		return unknownProperties(nil, e.names)
	case "propertyNames":
		return "property name " + e.cause.describe()
	case "minProperties":
		return fmt.Sprintf("has %s, fewer than the minimum %d", properties1(len(v.(map[string]any))), *s.MinProperties)
	case "maxProperties":
		return fmt.Sprintf("has %s, more than the maximum %d", properties1(len(v.(map[string]any))), *s.MaxProperties)
	case "required":
		return "missing required " + properties(e.names)
	case "dependentRequired":
		return fmt.Sprintf("missing %s, required when %q is present", properties(e.names), e.of)
	}
	return e.keyword + ": " + val // a keyword find returns but this does not word
}

func properties1(n int) string {
	if n == 1 {
		return "1 property"
	}
	return strconv.Itoa(n) + " properties"
}

// properties words property names: `property "a"`, `properties "a", "b"`.
func properties(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(abbreviate(n))
	}
	if len(q) == 1 {
		return "property " + q[0]
	}
	return "properties " + strings.Join(q, ", ")
}

// unknownProperties words an additionalProperties: false failure, listing
// what s does accept so that the sender can correct itself (s nil: no list).
func unknownProperties(s *jsonschema.Schema, extra []string) string {
	q := make([]string, len(extra))
	for i, k := range extra {
		q[i] = strconv.Quote(abbreviate(k))
	}
	var msg string
	switch n := len(q); {
	case n == 1:
		msg = "unknown property " + q[0]
	case n > maxListed:
		msg = fmt.Sprintf("unknown properties %s and %d more", strings.Join(q[:maxListed], ", "), n-maxListed)
	default:
		msg = "unknown properties " + strings.Join(q, ", ")
	}
	if s == nil {
		return msg // the schemas that declare properties are not one
	}
	switch known := slices.Sorted(maps.Keys(s.Properties)); {
	case len(known) > 0:
		msg += " (known: " + strings.Join(known, ", ") + ")"
	case len(s.PatternProperties) == 0:
		msg += " (takes no properties)"
	}
	return msg
}

// bound words a failed numeric limit, an integral one in full (100, not 1e+02).
func bound(val, relation string, limit float64) string {
	lim := formatNumber(limit)
	if limit == math.Trunc(limit) && math.Abs(limit) < 1e21 {
		lim = strconv.FormatFloat(limit, 'f', -1, 64)
	}
	return val + " " + relation + " " + lim
}

// count words n things: "1 item", "2 items".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}

// ratOf returns v as an exact rational when it is a number.
func ratOf(v any) (*big.Rat, bool) {
	switch n := v.(type) {
	case int64:
		return new(big.Rat).SetInt64(n), true
	case float64:
		return new(big.Rat).SetFloat64(n), !math.IsInf(n, 0) && !math.IsNaN(n)
	}
	rv := reflect.ValueOf(v)
	switch {
	case !rv.IsValid():
	case rv.CanInt():
		return new(big.Rat).SetInt64(rv.Int()), true
	case rv.CanUint():
		return new(big.Rat).SetUint64(rv.Uint()), true
	case rv.CanFloat():
		return ratOf(rv.Float())
	}
	return nil, false
}

// jsonEqual reports whether two decoded values are the same JSON value, as
// jsonschema-go compares them for enum, const and uniqueItems: numbers by
// value (1 and 1.0 are equal), objects whatever their key order.
func jsonEqual(a, b any) bool {
	if ra, ok := ratOf(a); ok {
		rb, ok := ratOf(b)
		return ok && ra.Cmp(rb) == 0
	}
	switch a := a.(type) {
	case nil:
		return b == nil
	case bool, string:
		return a == b
	case []any:
		b, ok := b.([]any)
		return ok && slices.EqualFunc(a, b, jsonEqual)
	case map[string]any:
		b, ok := b.(map[string]any)
		return ok && maps.EqualFunc(a, b, jsonEqual)
	}
	return false
}

// equalItems finds the first item of a equal to an earlier one: i, the
// earlier, and j. Items are grouped by a key that equal values share, so
// that a long array costs one pass.
func equalItems(a []any) (i, j int, ok bool) {
	seen := map[string][]int{}
	for j, x := range a {
		k := hashKey(x)
		for _, i := range seen[k] {
			if jsonEqual(a[i], x) {
				return i, j, true
			}
		}
		seen[k] = append(seen[k], j)
	}
	return 0, 0, false
}

// hashKey writes v with every number as a float64, so that equal values
// give the same key (distinct ones may too: jsonEqual decides).
func hashKey(v any) string {
	var b strings.Builder
	var write func(v any)
	write = func(v any) {
		switch x := v.(type) {
		case []any:
			b.WriteByte('[')
			for _, e := range x {
				write(e)
				b.WriteByte(',')
			}
			b.WriteByte(']')
		case map[string]any:
			b.WriteByte('{')
			for _, k := range slices.Sorted(maps.Keys(x)) {
				b.WriteString(strconv.Quote(k))
				write(x[k])
				b.WriteByte(',')
			}
			b.WriteByte('}')
		case string:
			b.WriteString(strconv.Quote(x))
		default:
			if r, ok := ratOf(x); ok {
				f, _ := r.Float64()
				b.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
			} else {
				fmt.Fprint(&b, x)
			}
		}
	}
	write(v)
	return b.String()
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
