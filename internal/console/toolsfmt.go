package console

import (
	"fmt"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/devicectl/devicectl/tools"
)

// FormatTools lists declarations one per tool: name, kind, parameters, and the description's first
// sentence.
func FormatTools(decls []tools.Declaration) string {
	width, kindWidth := 0, 0
	for _, d := range decls {
		width = max(width, len(d.Name))
		kindWidth = max(kindWidth, len(d.MainType)+1+len(d.SubType))
	}
	var b strings.Builder
	for _, d := range decls {
		kind := string(d.MainType) + "/" + string(d.SubType)
		fmt.Fprintf(&b, "%-*s  %-*s  %s\n", width, d.Name, kindWidth, kind, formatParams(d.Parameters))
		if desc := firstSentence(d.Description); desc != "" {
			fmt.Fprintf(&b, "%-*s  %s\n", width, "", desc)
		}
	}
	return b.String()
}

// firstSentence returns the description up to the end of its first sentence (Chinese or English)
// or line: the summary a person needs; the whole text is for the model.
func firstSentence(desc string) string {
	desc = strings.TrimSpace(desc)
	end := len(desc)
	for _, sep := range []string{"。", ". ", "\n"} {
		if i := strings.Index(desc, sep); i >= 0 && i+len(sep) < end {
			end = i + len(strings.TrimRight(sep, " \n"))
		}
	}
	return strings.TrimSpace(desc[:end])
}

// formatParams summarises an object schema: "level: integer 0..100 (required)".
func formatParams(s *jsonschema.Schema) string {
	if s == nil || len(s.Properties) == 0 {
		return "(no parameters)"
	}
	names := slices.Clone(s.PropertyOrder)
	for name := range s.Properties {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names[len(s.PropertyOrder):])
	parts := make([]string, 0, len(names))
	for _, name := range names {
		p := s.Properties[name]
		if p == nil {
			continue
		}
		part := name + ": " + schemaType(p)
		if len(p.Enum) > 0 {
			vals := make([]string, len(p.Enum))
			for i, v := range p.Enum {
				vals[i] = fmt.Sprint(v)
			}
			part += " " + strings.Join(vals, "|")
		}
		if p.Minimum != nil || p.Maximum != nil {
			part += " " + bound(p.Minimum) + ".." + bound(p.Maximum)
		}
		if slices.Contains(s.Required, name) {
			part += " (required)"
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, "; ")
}

func schemaType(s *jsonschema.Schema) string {
	if s.Type != "" {
		return s.Type
	}
	if len(s.Types) > 0 {
		return strings.Join(s.Types, "|")
	}
	return "any"
}

func bound(f *float64) string {
	if f == nil {
		return ""
	}
	return fmt.Sprint(*f)
}
