package opentool

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/devicectl/devicectl/tools"
)

// NewDocument describes the device's tools (tools.Registry.Declarations)
// as an OpenTool document, the one the device serves on GET /opentool/load.
//
// Each declaration becomes a function by FunctionFromDeclaration, in the
// given order. Their shared schemas are merged into Schemas: a name two
// tools use for the same schema is shared, and a name they use for
// different schemas is kept by the first, while the later tool's schema is
// renamed "<name>_2" (or _3, ...) and its references follow.
//
// A tool that cannot be expressed, or whose name an earlier tool already
// took, is left out. The error then names each tool left out (joined with
// errors.Join), and the document, which holds every other tool, is still
// returned and valid. The document is nil only when info lacks a title or
// a version.
func NewDocument(info Info, decls []tools.Declaration) (*Document, error) {
	if info.Title == "" || info.Version == "" {
		return nil, errors.New("opentool: NewDocument: info needs a title and a version")
	}
	doc := &Document{OpenTool: SpecVersion, Info: info, Functions: []Function{}}
	var skipped []error
	taken := map[string]bool{}
	for _, decl := range decls {
		if taken[decl.Name] {
			skipped = append(skipped, fmt.Errorf("opentool: tool %s: left out: an earlier tool has the same name", quote(decl.Name)))
			continue
		}
		f, schemas, err := FunctionFromDeclaration(decl)
		if err != nil {
			skipped = append(skipped, fmt.Errorf("%w (left out)", err))
			continue
		}
		doc.merge(&f, schemas)
		doc.Functions = append(doc.Functions, f)
		taken[f.Name] = true
	}
	// Every function was checked alone; this catches a mistake in merging.
	if err := doc.Validate(); err != nil {
		return nil, fmt.Errorf("opentool: NewDocument built an invalid document (a bug): %w", err)
	}
	return doc, errors.Join(skipped...)
}

// merge adds schemas, the shared schemas of f, to d.Schemas, renaming
// those whose names d already uses for something else, in f and in
// schemas.
func (d *Document) merge(f *Function, schemas map[string]*Schema) {
	if len(schemas) == 0 {
		return
	}
	// A schema can be shared when d has the same schema under the same
	// name, and so has everything it refers to: its references name the
	// same schemas. Anything else d already names must be renamed.
	clash := map[string]bool{}
	for name, s := range schemas {
		if old, ok := d.Schemas[name]; ok && !reflect.DeepEqual(old, s) {
			clash[name] = true
		}
	}
	for changed := true; changed; {
		changed = false
		for name, s := range schemas {
			if _, ok := d.Schemas[name]; !ok || clash[name] {
				continue
			}
			for _, ref := range refs(s) {
				if clash[ref] {
					clash[name], changed = true, true
					break
				}
			}
		}
	}
	rename := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(clash)) {
		rename[name] = d.freeName(name, schemas, rename)
	}
	for i := range f.Parameters {
		renameRefs(f.Parameters[i].Schema, rename)
	}
	if d.Schemas == nil {
		d.Schemas = map[string]*Schema{}
	}
	for name, s := range schemas {
		renameRefs(s, rename)
		if to, ok := rename[name]; ok {
			name = to
		}
		if _, ok := d.Schemas[name]; !ok {
			d.Schemas[name] = s
		}
	}
}

// freeName returns name_N for the lowest N from 2 that neither d, the
// incoming schemas nor an earlier rename use, shortened to stay a valid
// schema name.
func (d *Document) freeName(name string, incoming map[string]*Schema, rename map[string]string) string {
	for n := 2; ; n++ {
		suffix := "_" + strconv.Itoa(n)
		base := name
		if len(base)+len(suffix) > 64 {
			base = base[:64-len(suffix)]
		}
		cand := base + suffix
		_, inD := d.Schemas[cand]
		_, inIncoming := incoming[cand]
		if !inD && !inIncoming && !slices.Contains(slices.Collect(maps.Values(rename)), cand) {
			return cand
		}
	}
}

// refs returns the names s refers to.
func refs(s *Schema) []string {
	var names []string
	var walk func(s *Schema)
	walk = func(s *Schema) {
		if s == nil {
			return
		}
		if name, ok := strings.CutPrefix(s.Ref, RefPrefix); ok && s.Ref != "" {
			names = append(names, name)
		}
		for _, p := range s.Properties {
			walk(p)
		}
		walk(s.Items)
	}
	walk(s)
	return names
}

func renameRefs(s *Schema, rename map[string]string) {
	if s == nil || len(rename) == 0 {
		return
	}
	if name, ok := strings.CutPrefix(s.Ref, RefPrefix); ok {
		if to, ok := rename[name]; ok {
			s.Ref = RefPrefix + to
		}
	}
	for _, p := range s.Properties {
		renameRefs(p, rename)
	}
	renameRefs(s.Items, rename)
}
