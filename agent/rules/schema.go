package rules

import (
	"math"
	"slices"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/devicectl/devicectl/agent/localtools"
	"github.com/devicectl/devicectl/agent/memory"
	"github.com/devicectl/devicectl/agent/reminders"
	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
)

// knownTools is every tool the grammar can call, in the order capabilities are listed.
var knownTools = []string{protocol.ToolVolume, protocol.ToolExpression, protocol.ToolStatus, localtools.ToolCalculate, memory.ToolAdd, memory.ToolSearch, memory.ToolDelete, localtools.ToolSearch,
	reminders.ToolSet, reminders.ToolList, reminders.ToolCancel}

func indexTools(ds []tools.Declaration) map[string]tools.Declaration {
	m := make(map[string]tools.Declaration, len(ds))
	for _, d := range ds {
		m[d.Name] = d
	}
	return m
}

// property returns the schema of a tool's input property, or nil when it declares none.
func property(d tools.Declaration, name string) *jsonschema.Schema {
	if d.Parameters == nil {
		return nil
	}
	return d.Parameters.Properties[name]
}

// intBounds returns the inclusive range an integer property accepts, def where the schema
// does not say.
func intBounds(d tools.Declaration, name string, defLo, defHi int) (lo, hi int) {
	lo, hi = defLo, defHi
	p := property(d, name)
	if p == nil {
		return lo, hi
	}
	if p.Minimum != nil {
		lo = clampInt(math.Ceil(*p.Minimum))
	}
	if p.ExclusiveMinimum != nil {
		lo = max(lo, clampInt(math.Floor(*p.ExclusiveMinimum)+1))
	}
	if p.Maximum != nil {
		hi = clampInt(math.Floor(*p.Maximum))
	}
	if p.ExclusiveMaximum != nil {
		hi = min(hi, clampInt(math.Ceil(*p.ExclusiveMaximum)-1))
	}
	return lo, hi
}

func clampInt(f float64) int {
	switch {
	case f > math.MaxInt32:
		return math.MaxInt32 // an int is 32 bits on arm and 386
	case f < math.MinInt32:
		return math.MinInt32
	}
	return int(f)
}

// enumStrings returns the string values a property's enum lists; nil when it has no enum.
func enumStrings(d tools.Declaration, name string) []string {
	p := property(d, name)
	if p == nil || p.Enum == nil {
		return nil
	}
	out := make([]string, 0, len(p.Enum))
	for _, v := range p.Enum {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// isType reports whether a property is declared with type t (alone or among others).
func isType(d tools.Declaration, name, t string) bool {
	p := property(d, name)
	return p != nil && (p.Type == t || slices.Contains(p.Types, t))
}

// fitString shortens s to the property's maxLength, if it declares one.
func fitString(d tools.Declaration, name, s string) string {
	p := property(d, name)
	if p == nil || p.MaxLength == nil || utf8.RuneCountInString(s) <= *p.MaxLength {
		return s
	}
	return string([]rune(s)[:max(*p.MaxLength, 0)])
}

// minLength is the property's minLength, 0 when it declares none.
func minLength(d tools.Declaration, name string) int {
	if p := property(d, name); p != nil && p.MinLength != nil {
		return *p.MinLength
	}
	return 0
}
