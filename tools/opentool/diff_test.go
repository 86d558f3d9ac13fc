package opentool

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// diff describes how got differs from want, one line per difference with
// the Go path to it ("Functions[1].Parameters[0].Schema.Type: want
// "string", got "integer""), or returns "" when they are deeply equal. It
// keeps nil and empty slices and maps apart, as reflect.DeepEqual does,
// since the JSON does too.
func diff(want, got any) string {
	var lines []string
	diffValue(&lines, "", reflect.ValueOf(want), reflect.ValueOf(got))
	return strings.Join(lines, "\n")
}

func diffValue(lines *[]string, path string, w, g reflect.Value) {
	report := func(format string, args ...any) {
		p := path
		if p == "" {
			p = "(top)"
		}
		*lines = append(*lines, p+": "+fmt.Sprintf(format, args...))
	}
	if !w.IsValid() || !g.IsValid() {
		if w.IsValid() != g.IsValid() {
			report("want %s, got %s", show(w), show(g))
		}
		return
	}
	if w.Type() != g.Type() {
		report("want %s (%s), got %s (%s)", show(w), w.Type(), show(g), g.Type())
		return
	}
	switch w.Kind() {
	case reflect.Pointer, reflect.Interface:
		if w.IsNil() || g.IsNil() {
			if w.IsNil() != g.IsNil() {
				report("want %s, got %s", show(w), show(g))
			}
			return
		}
		diffValue(lines, path, w.Elem(), g.Elem())
	case reflect.Struct:
		for i := range w.NumField() {
			diffValue(lines, path+"."+w.Type().Field(i).Name, w.Field(i), g.Field(i))
		}
	case reflect.Slice:
		if w.IsNil() != g.IsNil() {
			report("want %s, got %s", show(w), show(g))
			return
		}
		for i := range max(w.Len(), g.Len()) {
			p := fmt.Sprintf("%s[%d]", path, i)
			switch {
			case i >= g.Len():
				*lines = append(*lines, p+": missing, want "+show(w.Index(i)))
			case i >= w.Len():
				*lines = append(*lines, p+": extra "+show(g.Index(i)))
			default:
				diffValue(lines, p, w.Index(i), g.Index(i))
			}
		}
	case reflect.Map:
		if w.IsNil() != g.IsNil() {
			report("want %s, got %s", show(w), show(g))
			return
		}
		keys := map[string]reflect.Value{}
		for _, k := range append(w.MapKeys(), g.MapKeys()...) {
			keys[fmt.Sprint(k)] = k
		}
		for _, ks := range slices.Sorted(maps.Keys(keys)) {
			k := keys[ks]
			p := fmt.Sprintf("%s[%q]", path, ks)
			wv, gv := w.MapIndex(k), g.MapIndex(k)
			switch {
			case !gv.IsValid():
				*lines = append(*lines, p+": missing, want "+show(wv))
			case !wv.IsValid():
				*lines = append(*lines, p+": extra "+show(gv))
			default:
				diffValue(lines, p, wv, gv)
			}
		}
	default:
		if !reflect.DeepEqual(w.Interface(), g.Interface()) {
			report("want %s, got %s", show(w), show(g))
		}
	}
}

func show(v reflect.Value) string {
	if !v.IsValid() {
		return "nothing"
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
		if v.IsNil() {
			return "nil"
		}
	}
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	return fmt.Sprintf("%#v", v.Interface())
}
