package tools

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// The `tool` struct tag adds the constraints jsonschema.For cannot infer
// from a Go type. Its grammar, documented in doc.go:
//
//	tag   = item { "," item }
//	item  = "enum=" value { "|" value } | "min=" number | "max=" number
//
// Values are taken literally (no quoting, no spaces trimmed), so an enum
// value cannot contain "," or "|".

// applyTags walks the Go type t alongside the schema jsonschema.ForType
// inferred for it and applies each field's `tool` tag to that field's
// property. Walking along s (a finite tree) terminates even for types that
// refer to themselves through pointers.
func applyTags(t reflect.Type, s *jsonschema.Schema) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		return applyFieldTags(t, s)
	case reflect.Slice, reflect.Array:
		if s.Items != nil {
			return applyTags(t.Elem(), s.Items)
		}
	case reflect.Map:
		if s.AdditionalProperties != nil {
			return applyTags(t.Elem(), s.AdditionalProperties)
		}
	}
	return nil
}

func applyFieldTags(t reflect.Type, s *jsonschema.Schema) error {
	fields := reflect.VisibleFields(t)
	// Mirror jsonschema.ForType: it skips embedded structs themselves (their
	// promoted fields are visited) and fields encoding/json omits, and when
	// two fields have the same JSON name the last one wins.
	last := map[string]int{}
	for i, f := range fields {
		if name, ok := jsonName(f); ok && !f.Anonymous {
			last[name] = i
		}
	}
	for i, f := range fields {
		tag, tagged := f.Tag.Lookup("tool")
		name, ok := jsonName(f)
		if !ok || f.Anonymous || last[name] != i || s.Properties[name] == nil {
			if tagged {
				return fmt.Errorf("field %s: tag tool:%q on a field that is not part of the input", f.Name, tag)
			}
			continue
		}
		prop := s.Properties[name]
		if tagged {
			if err := applyTag(prop, tag); err != nil {
				return fmt.Errorf("field %s: tag tool:%q: %w", f.Name, tag, err)
			}
		}
		if err := applyTags(f.Type, prop); err != nil {
			return fmt.Errorf("field %s: %w", f.Name, err)
		}
	}
	return nil
}

// jsonName returns the name encoding/json uses for f, or false when it
// leaves f out.
func jsonName(f reflect.StructField) (string, bool) {
	if !f.IsExported() {
		return "", false
	}
	tag, ok := f.Tag.Lookup("json")
	if !ok {
		return f.Name, true
	}
	name, _, hasOpts := strings.Cut(tag, ",")
	if name == "-" && !hasOpts {
		return "", false
	}
	if name == "" {
		return f.Name, true
	}
	return name, true
}

// applyTag applies one field's `tool` tag to its property schema p. On a
// slice or array field the constraints apply to the items.
func applyTag(p *jsonschema.Schema, tag string) error {
	if tag == "" {
		return errors.New("empty tag")
	}
	target := p
	typ, nullable := baseType(p)
	if typ == "array" && p.Items != nil {
		target = p.Items
		typ, nullable = baseType(target)
	}
	seen := map[string]bool{}
	for item := range strings.SplitSeq(tag, ",") {
		key, value, ok := strings.Cut(item, "=")
		if !ok {
			return fmt.Errorf("%q is not key=value", item)
		}
		if seen[key] {
			return fmt.Errorf("%s given twice", key)
		}
		seen[key] = true
		var err error
		switch key {
		case "enum":
			err = setEnum(target, typ, nullable, value)
		case "min":
			err = setBound(target, typ, key, value, &target.Minimum)
		case "max":
			err = setBound(target, typ, key, value, &target.Maximum)
		default:
			err = fmt.Errorf("unknown key %q (want enum, min or max)", key)
		}
		if err != nil {
			return err
		}
	}
	if target.Minimum != nil && target.Maximum != nil && *target.Minimum > *target.Maximum {
		return fmt.Errorf("min %s is greater than max %s", formatNumber(*target.Minimum), formatNumber(*target.Maximum))
	}
	return nil
}

// baseType returns the one non-null JSON type of s ("" if it has none or
// several) and whether null is allowed too (a pointer field).
func baseType(s *jsonschema.Schema) (typ string, nullable bool) {
	if s.Type != "" {
		return s.Type, false
	}
	for _, t := range s.Types {
		switch {
		case t == "null":
			nullable = true
		case typ == "":
			typ = t
		default:
			return "", nullable
		}
	}
	return typ, nullable
}

func setEnum(s *jsonschema.Schema, typ string, nullable bool, value string) error {
	if value == "" {
		return errors.New("enum has no values")
	}
	vals := strings.Split(value, "|")
	var enum []any
	for i, v := range vals {
		if v == "" {
			return fmt.Errorf("enum value %d is empty", i+1)
		}
		if slices.Index(vals, v) != i {
			return fmt.Errorf("enum value %q given twice", v)
		}
		switch typ {
		case "string":
			enum = append(enum, v)
		case "integer":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return fmt.Errorf("enum value %q is not an integer", v)
			}
			enum = append(enum, n)
		case "number":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
				return fmt.Errorf("enum value %q is not a number", v)
			}
			enum = append(enum, f)
		default:
			return fmt.Errorf("enum needs a string, integer or number field, not %s", describeType(typ))
		}
	}
	if nullable {
		// A pointer field accepts null; the enum must not take that away.
		enum = append(enum, nil)
	}
	s.Enum = enum
	return nil
}

// setBound sets a minimum or maximum, refusing one looser than what the Go
// type already imposes (a uint cannot take min=-1).
func setBound(s *jsonschema.Schema, typ, key, value string, bound **float64) error {
	if typ != "integer" && typ != "number" {
		return fmt.Errorf("%s needs an integer or number field, not %s", key, describeType(typ))
	}
	f, err := strconv.ParseFloat(value, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return fmt.Errorf("%s %q is not a number", key, value)
	}
	if typ == "integer" && f != math.Trunc(f) {
		return fmt.Errorf("%s %s is not an integer", key, value)
	}
	if old := *bound; old != nil {
		if key == "min" && f < *old || key == "max" && f > *old {
			return fmt.Errorf("%s %s is outside the field type's own range (%s %s)", key, value, key, formatNumber(*old))
		}
	}
	*bound = &f
	return nil
}

func describeType(typ string) string {
	if typ == "" {
		return "a field of several types"
	}
	return withArticle(typ)
}

func formatNumber(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
