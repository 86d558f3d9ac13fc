package console

import (
	"fmt"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/devicectl/devicectl/internal/term"
	"github.com/devicectl/devicectl/tools"
)

// FormatTools lists declarations one per tool: name, kind, parameters, and the description's first
// sentence. A device wrote all of it: what could drive the terminal is shown escaped
// (term.SanitizeLine), and the columns are aligned in display width.
func FormatTools(decls []tools.Declaration) string {
	type row struct{ name, kind, params, desc string }
	rows := make([]row, len(decls))
	width, kindWidth := 0, 0
	for i, d := range decls {
		rows[i] = row{
			name:   term.SanitizeLine(d.Name),
			kind:   term.SanitizeLine(string(d.MainType) + "/" + string(d.SubType)),
			params: term.SanitizeLine(formatParams(d.Parameters)),
			desc:   term.SanitizeLine(firstSentence(d.Description)),
		}
		width = max(width, term.StringWidth(rows[i].name))
		kindWidth = max(kindWidth, term.StringWidth(rows[i].kind))
	}
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%s  %s  %s\n", pad(r.name, width), pad(r.kind, kindWidth), r.params)
		if r.desc != "" {
			fmt.Fprintf(&b, "%s  %s\n", pad("", width), r.desc)
		}
	}
	return b.String()
}

// pad fills s with spaces to width columns.
func pad(s string, width int) string {
	return s + strings.Repeat(" ", max(width-term.StringWidth(s), 0))
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
