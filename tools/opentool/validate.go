package opentool

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/devicectl/devicectl/protocol"
)

// The patterns are compiled when a document is first checked
// (compilePatterns, at the top of each function that uses them), not at
// every start of a program that links this package and reads none.
var (
	compileOnce sync.Once
	// versionPattern accepts the 1.x versions this package reads.
	versionPattern *regexp.Regexp
	// schemaName keeps shared schema names usable unescaped in a JSON
	// Pointer ("#/schemas/<name>", "#/$defs/<name>") and in a URI
	// fragment: no "/", "~", "%", spaces or other characters that
	// readers would have to escape, each in their own way.
	schemaName *regexp.Regexp
)

func compilePatterns() {
	compileOnce.Do(func() {
		versionPattern = regexp.MustCompile(`^1\.(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*))?$`)
		schemaName = regexp.MustCompile(`^[a-zA-Z0-9_.-]{1,64}$`)
	})
}

// Validate reports everything wrong with d, as Parse does (PathErrors
// joined, the first 20 and a count of the rest): a version other than 1.x,
// a missing title or version, a server URL that is not absolute http(s),
// function names that are malformed or repeated, empty function
// descriptions, parameters without a name, with a repeated name or without
// a schema, schema names that are not ^[a-zA-Z0-9_.-]{1,64}$, and schemas
// that break the rules given on Schema, refer to no schema, or form a
// chain of references that never reaches a type ({"$ref":"#/schemas/A"}
// as schema A). References that come back to a schema through properties
// or items are fine: that is how recursive data is described.
func (d *Document) Validate() error {
	if d == nil {
		return errors.New("opentool: Validate(nil)")
	}
	c := checker{doc: d, problems: &problems{}}
	c.document()
	return c.err()
}

// checker checks a Document's content; the JSON types were the decoder's
// business.
type checker struct {
	doc *Document
	*problems
	// quiet holds the paths the decoder reported: checker says nothing at
	// or under them.
	quiet map[string]bool
	depth int
}

// maxSchemaDepth bounds the recursion over a schema tree. Parse's MaxDepth
// keeps decoded documents far below it; it is for a Document built by hand
// whose schemas point back at themselves.
const maxSchemaDepth = 100

func (c *checker) fail(path, format string, args ...any) {
	if c.quieted(path) {
		return
	}
	c.add(path, format, args...)
}

// quieted reports whether path, or a path it is under, is in c.quiet.
// Paths are cut only at "." and "[": a quoted key holding one of them
// gives a prefix no real path has, which matches nothing.
func (c *checker) quieted(path string) bool {
	if len(c.quiet) == 0 {
		return false
	}
	if c.quiet[path] {
		return true
	}
	for i := len(path) - 1; i > 0; i-- {
		if (path[i] == '.' || path[i] == '[') && c.quiet[path[:i]] {
			return true
		}
	}
	return false
}

func (c *checker) document() {
	compilePatterns()
	d := c.doc
	switch {
	case d.OpenTool == "":
		c.fail("opentool", "missing (required)")
	case !versionPattern.MatchString(d.OpenTool):
		c.fail("opentool", `%s is not a version this package reads ("1.x" or "1.x.y")`, quote(d.OpenTool))
	}
	if d.Info.Title == "" {
		c.fail("info.title", "empty (required)")
	}
	if d.Info.Version == "" {
		c.fail("info.version", "empty (required)")
	}
	if d.Server != nil {
		c.server()
	}
	names := map[string]int{}
	for i := range d.Functions {
		path := indexPath("functions", i)
		f := &d.Functions[i]
		c.function(path, f)
		if f.Name == "" {
			continue
		}
		if j, dup := names[f.Name]; dup {
			c.fail(joinPath(path, "name"), "%s is already the name of functions[%d]", quote(f.Name), j)
		} else {
			names[f.Name] = i
		}
	}
	c.schemas()
}

func (c *checker) server() {
	u := c.doc.Server.URL
	if u == "" {
		c.fail("server.url", "empty (required)")
		return
	}
	pu, err := url.Parse(u)
	switch {
	case err != nil:
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		c.fail("server.url", "%s is not a URL: %v", quote(u), err)
	case pu.Scheme != "http" && pu.Scheme != "https":
		c.fail("server.url", "%s is not an absolute http or https URL", quote(u))
	case pu.Hostname() == "":
		c.fail("server.url", "%s has no host", quote(u))
	}
}

func (c *checker) function(path string, f *Function) {
	switch {
	case f.Name == "":
		c.fail(joinPath(path, "name"), "empty (required)")
	case !protocol.ValidToolName(f.Name): // the specification's rule (OpenAI's) is the protocol's
		c.fail(joinPath(path, "name"), "%s does not match %s", quote(f.Name), protocol.ToolNamePattern)
	}
	if strings.TrimSpace(f.Description) == "" {
		c.fail(joinPath(path, "description"), "empty (required: a model decides from it when to call the function)")
	}
	names := map[string]int{}
	for i := range f.Parameters {
		ppath := indexPath(joinPath(path, "parameters"), i)
		p := &f.Parameters[i]
		if p.Name == "" {
			c.fail(joinPath(ppath, "name"), "empty (required)")
		} else if j, dup := names[p.Name]; dup {
			c.fail(joinPath(ppath, "name"), "%s is already the name of parameters[%d]", quote(p.Name), j)
		} else {
			names[p.Name] = i
		}
		c.required(joinPath(ppath, "schema"), p.Schema)
	}
	if r := f.Return; r != nil {
		rpath := joinPath(path, "return")
		if r.Name == "" {
			c.fail(joinPath(rpath, "name"), "empty (required)")
		}
		c.required(joinPath(rpath, "schema"), r.Schema)
	}
}

// required checks a schema that must be present.
func (c *checker) required(path string, s *Schema) {
	if s == nil {
		c.fail(path, "missing (required)")
		return
	}
	c.schema(path, s)
}

// schemas checks the shared schemas and the references among them.
func (c *checker) schemas() {
	compilePatterns()
	names := slices.Sorted(maps.Keys(c.doc.Schemas))
	for _, name := range names {
		path := keyPath("schemas", name)
		if !schemaName.MatchString(name) {
			c.fail(path, "the name %s does not match %s (it is used in references)", quote(name), schemaName)
		}
		c.required(path, c.doc.Schemas[name])
	}
	// A reference schema has no children, so a loop that never reaches a
	// type can only run through shared schemas that are references
	// themselves. Each name's fate is settled once, so that a long chain
	// costs linear time.
	const (
		unknown = iota
		onPath
		ends  // reaches a type, or a reference reported elsewhere
		loops // never reaches a type
	)
	state := make(map[string]int, len(names))
	for _, name := range names {
		var path []string
		fate := ends
		for n := name; ; {
			switch state[n] {
			case onPath, loops:
				fate = loops
			case ends:
			default:
				state[n] = onPath
				path = append(path, n)
				if next, ok := c.refName(c.doc.Schemas[n]); ok {
					n = next
					continue
				}
			}
			break
		}
		for _, n := range path {
			state[n] = fate
		}
	}
	for _, name := range names {
		if state[name] == loops {
			c.fail(keyPath("schemas", name), "$ref chain %s never reaches a type", c.chain(name))
		}
	}
}

// refName returns the name of the shared schema s refers to, if s is a
// reference to one that exists.
func (c *checker) refName(s *Schema) (string, bool) {
	if s == nil || s.Ref == "" {
		return "", false
	}
	name, ok := strings.CutPrefix(s.Ref, RefPrefix)
	if !ok || c.doc.Schemas[name] == nil {
		return "", false
	}
	return name, true
}

// chain spells the looping chain of references from name, up to the first
// repeated name, shortened when long.
func (c *checker) chain(name string) string {
	const show = 8
	seen := map[string]bool{}
	var chain []string
	for n, ok := name, true; ok; n, ok = c.refName(c.doc.Schemas[n]) {
		if len(chain) == show {
			return strings.Join(chain, " -> ") + " -> ..."
		}
		chain = append(chain, n)
		if seen[n] {
			break
		}
		seen[n] = true
	}
	return strings.Join(chain, " -> ")
}

func (c *checker) schema(path string, s *Schema) {
	if c.depth >= maxSchemaDepth {
		c.fail(path, "schemas nest more than %d levels deep", maxSchemaDepth)
		return
	}
	c.depth++
	defer func() { c.depth-- }()
	if s.Ref != "" {
		c.reference(path, s)
		return
	}
	switch {
	case s.Type == "":
		c.fail(joinPath(path, "type"), "missing (required unless the schema is a $ref)")
		// Without a type nothing else can be judged.
		return
	case !validType(s.Type):
		c.fail(joinPath(path, "type"), "%s is not one of %s", quote(s.Type), typeList)
		return
	}
	if s.Type == TypeObject {
		for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
			c.required(keyPath(joinPath(path, "properties"), name), s.Properties[name])
		}
		for i, name := range s.Required {
			if _, ok := s.Properties[name]; !ok {
				c.fail(indexPath(joinPath(path, "required"), i), "%s names no property", quote(name))
			}
		}
	} else {
		if s.Properties != nil {
			c.fail(joinPath(path, "properties"), "only allowed when type is object, not %s", s.Type)
		}
		if s.Required != nil {
			c.fail(joinPath(path, "required"), "only allowed when type is object, not %s", s.Type)
		}
	}
	if s.Type == TypeArray {
		if s.Items == nil {
			c.fail(joinPath(path, "items"), "missing (required when type is array)")
		} else {
			c.schema(joinPath(path, "items"), s.Items)
		}
	} else if s.Items != nil {
		c.fail(joinPath(path, "items"), "only allowed when type is array, not %s", s.Type)
	}
	if s.Enum != nil {
		c.enum(joinPath(path, "enum"), s.Type, s.Enum)
	}
}

func (c *checker) reference(path string, s *Schema) {
	var extra []string
	if s.Type != "" {
		extra = append(extra, "type")
	}
	if s.Properties != nil {
		extra = append(extra, "properties")
	}
	if s.Items != nil {
		extra = append(extra, "items")
	}
	if s.Enum != nil {
		extra = append(extra, "enum")
	}
	if s.Required != nil {
		extra = append(extra, "required")
	}
	if len(extra) > 0 {
		c.fail(path, "a $ref schema may only have a description besides, not %s", strings.Join(extra, ", "))
	}
	name, ok := strings.CutPrefix(s.Ref, RefPrefix)
	switch {
	case !ok || name == "":
		c.fail(path, "$ref %s is not of the form %q", quote(s.Ref), RefPrefix+"<name>")
	case c.doc.Schemas[name] == nil:
		c.fail(path, "$ref %s names no schema", quote(s.Ref))
	}
}

func (c *checker) enum(path, typ string, values []any) {
	switch typ {
	case TypeArray, TypeObject:
		c.fail(path, "only allowed for boolean, integer, number and string, not %s", typ)
		return
	}
	if len(values) == 0 {
		c.fail(path, "empty (no value could be given; leave enum out instead)")
		return
	}
	for i, v := range values {
		if msg := enumMismatch(typ, v); msg != "" {
			c.fail(indexPath(path, i), "%s", msg)
		}
	}
}

// enumMismatch says why v cannot be an enum value of type typ, or "".
func enumMismatch(typ string, v any) string {
	switch typ {
	case TypeString:
		if _, ok := v.(string); ok {
			return ""
		}
	case TypeBoolean:
		if _, ok := v.(bool); ok {
			return ""
		}
	case TypeInteger, TypeNumber:
		f, ok, msg := number(v)
		switch {
		case msg != "":
			return msg
		case !ok:
		case typ == TypeInteger && f != math.Trunc(f):
			return fmt.Sprintf("%v is not an integer", v)
		default:
			return ""
		}
	}
	return fmt.Sprintf("%s is not %s %s", describe(v), article(typ), typ)
}

// number returns v as a float64 if it is a number. msg says why a number
// is not usable: beyond float64, which is what the device validates with,
// or not finite.
func number(v any) (f float64, ok bool, msg string) {
	switch n := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return 0, true, fmt.Sprintf("%s is out of range", n)
			}
			return 0, true, fmt.Sprintf("%s is not a JSON number", quote(string(n)))
		}
		return f, true, ""
	case float32, float64:
		f := reflect.ValueOf(v).Float()
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return 0, true, fmt.Sprintf("%v is not a JSON number", f)
		}
		return f, true, ""
	case int, int8, int16, int32, int64:
		return float64(reflect.ValueOf(v).Int()), true, ""
	case uint, uint8, uint16, uint32, uint64, uintptr:
		return float64(reflect.ValueOf(v).Uint()), true, ""
	}
	return 0, false, ""
}

func describe(v any) string {
	switch v := v.(type) {
	case string:
		return quote(v)
	case nil:
		return "null"
	case bool, json.Number:
		return fmt.Sprint(v)
	}
	if _, ok, _ := number(v); ok {
		return fmt.Sprint(v)
	}
	return kind(v)
}

func article(typ string) string {
	if typ == TypeInteger || typ == TypeObject || typ == TypeArray {
		return "an"
	}
	return "a"
}
