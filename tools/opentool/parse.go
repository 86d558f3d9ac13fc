package opentool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Limits on what Parse reads. They only keep a hostile or broken peer from
// costing the device its memory: a document describing a few hundred
// functions is a few hundred kilobytes.
const (
	// MaxSize is the largest document Parse reads, in bytes: 1 MiB, room
	// for some 3000 functions. Decoding takes memory in proportion, about
	// 25 times the size for a realistic document and up to 90 times for a
	// pathological one (a million tiny values), so 4 MiB, common for
	// servers, would let one document take 300 MB of a small device.
	MaxSize = 1 << 20
	// MaxDepth is how deeply arrays and objects may nest. A parameter's
	// schema starts at depth 6 and every nested object costs two (the
	// schema and its properties), which leaves room for 29 levels.
	MaxDepth = 64
	// maxProblems is how many problems an error lists before "and N more".
	maxProblems = 20
)

// Parse decodes an OpenTool document and checks it as Validate does.
//
// Every problem is reported, each as a *PathError naming the JSON path of
// the offending value, joined with errors.Join (the first 20, then a line
// "and N more problems"). Values of the wrong JSON type and missing
// required fields come first, then the rest, each group in document
// order. A value of the wrong type is reported once, not again for what
// it lacks as a result.
//
// Parse is lenient where readers can be and strict where a mistake would
// change what a function means:
//
//   - unknown fields are ignored (forward compatibility), a repeated key
//     keeps its last value, and null is the same as an absent field;
//   - a parameter without "required" is optional, although the
//     specification makes the field mandatory. SDKs always write it, but
//     hand-written documents forget it, and refusing the whole document
//     for that helps nobody. Optional is the safe guess: the device then
//     refuses no call the author meant to allow, and a function that does
//     need the value fails the call itself, in its own words;
//   - an object schema without "properties" is an object with any
//     properties (the specification requires the field; the Document
//     gets an empty map, so that it is written back as the spec wants).
//
// Input larger than MaxSize or nested deeper than MaxDepth is refused
// before it is decoded. A leading UTF-8 byte order mark is ignored.
func Parse(data []byte) (*Document, error) {
	if len(data) > MaxSize {
		return nil, &PathError{Msg: fmt.Sprintf("document is %d bytes, more than the limit of %d (1 MiB)", len(data), MaxSize)}
	}
	if depth := nesting(data); depth > MaxDepth {
		return nil, &PathError{Msg: fmt.Sprintf("document nests arrays and objects more than %d levels deep", MaxDepth)}
	}
	// Windows editors start UTF-8 files with a byte order mark, which
	// JSON does not allow; a hand-written document should not fail on it.
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	dec := json.NewDecoder(bytes.NewReader(data))
	// Numbers stay json.Number: exact, and written back as they were read.
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, syntaxError(data, err)
	}
	end := dec.InputOffset()
	if rest := bytes.TrimLeft(data[end:], " \t\r\n"); len(rest) > 0 {
		return nil, &PathError{Msg: fmt.Sprintf("not valid JSON: data after the document at %s", position(data, int64(len(data)-len(rest))))}
	}
	dc := decoder{problems: &problems{}, quiet: map[string]bool{}}
	doc := dc.document(v)
	switch {
	case doc == nil:
	case dc.more > 0:
		// The list is full already. Checking on would only add to the
		// count, and it would need all the decoder's paths to keep quiet
		// about what it reported, which for a large broken document is a
		// lot of memory.
		dc.partial = true
	default:
		c := checker{doc: doc, problems: dc.problems, quiet: dc.quiet}
		c.document()
	}
	if err := dc.err(); err != nil {
		return nil, err
	}
	return doc, nil
}

// nesting returns how deeply arrays and objects nest in data, or a number
// above MaxDepth as soon as it is exceeded. It assumes valid JSON; on
// anything else its answer does not matter, as decoding then fails.
func nesting(data []byte) int {
	depth, inString, escaped := 0, false, false
	for _, b := range data {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			depth++
			if depth > MaxDepth {
				return depth
			}
		case b == '}' || b == ']':
			depth--
		}
	}
	return depth
}

func syntaxError(data []byte, err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		// Offset counts the offending byte.
		return &PathError{Msg: fmt.Sprintf("not valid JSON: %v at %s", se, position(data, se.Offset-1))}
	case errors.Is(err, io.EOF):
		return &PathError{Msg: "not valid JSON: the document is empty"}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &PathError{Msg: "not valid JSON: the document ends early"}
	default:
		return &PathError{Msg: fmt.Sprintf("not valid JSON: %v", err)}
	}
}

// position turns the offset of a byte into "line L, column C" (1-based;
// columns count bytes) for a human looking at the document in an editor.
func position(data []byte, offset int64) string {
	if offset < 0 || offset > int64(len(data)) {
		return fmt.Sprintf("byte %d", offset)
	}
	before := data[:offset]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("line %d, column %d", line, col)
}

// problems collects the problems of a document: the first maxProblems,
// and how many more there are. Only a count is kept of the rest, so that
// a large broken document costs no more memory than a small one.
type problems struct {
	list []error
	more int
	// partial says that checking stopped early, so more is a lower bound.
	partial bool
}

func (p *problems) add(path, format string, args ...any) {
	if len(p.list) == maxProblems {
		p.more++
		return
	}
	p.list = append(p.list, &PathError{Path: path, Msg: fmt.Sprintf(format, args...)})
}

// err joins the problems, or returns nil if there are none.
func (p *problems) err() error {
	switch {
	case p.partial:
		return errors.Join(append(p.list, fmt.Errorf("and at least %d more problems", p.more))...)
	case p.more > 0:
		return errors.Join(append(p.list, fmt.Errorf("and %d more problems", p.more))...)
	}
	return errors.Join(p.list...)
}

// decoder turns the generic decoded JSON into a Document, reporting every
// value of the wrong JSON type and every missing required field. Whatever
// else is wrong is left to checker, which works on Documents built by hand
// as well.
type decoder struct {
	*problems
	// quiet holds the paths reported. A value of the wrong type is left
	// zero in the Document, and checker would complain about it again
	// ("empty"): checker says nothing at or under these paths.
	quiet map[string]bool
}

func (dc *decoder) fail(path, format string, args ...any) {
	if len(dc.list) < maxProblems {
		dc.quiet[path] = true
	}
	dc.add(path, format, args...)
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return fmt.Sprintf("%T", v)
}

// get returns m[k]; null counts as absent, as SDKs write null for unset
// optional fields.
func get(m map[string]any, k string) (any, bool) {
	v, ok := m[k]
	return v, ok && v != nil
}

func (dc *decoder) object(path string, v any) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		dc.fail(path, "want an object, got %s", kind(v))
	}
	return m, ok
}

func (dc *decoder) array(path string, v any) ([]any, bool) {
	a, ok := v.([]any)
	if !ok {
		dc.fail(path, "want an array, got %s", kind(v))
	}
	return a, ok
}

// str returns the string at m[k]. A required one that is absent is
// reported; an empty one is left to checker.
func (dc *decoder) str(m map[string]any, path, k string, required bool) string {
	path = joinPath(path, k)
	v, ok := get(m, k)
	if !ok {
		if required {
			dc.fail(path, "missing (required)")
		}
		return ""
	}
	s, ok := v.(string)
	if !ok {
		dc.fail(path, "want a string, got %s", kind(v))
	}
	return s
}

// required returns the object or array at m[k], reporting it if absent.
func (dc *decoder) required(m map[string]any, path, k string) (any, bool) {
	v, ok := get(m, k)
	if !ok {
		dc.fail(joinPath(path, k), "missing (required)")
	}
	return v, ok
}

func (dc *decoder) document(v any) *Document {
	m, ok := dc.object("", v)
	if !ok {
		return nil
	}
	d := &Document{OpenTool: dc.str(m, "", "opentool", true)}
	if v, ok := dc.required(m, "", "info"); ok {
		if im, ok := dc.object("info", v); ok {
			d.Info = Info{
				Title:       dc.str(im, "info", "title", true),
				Description: dc.str(im, "info", "description", false),
				Version:     dc.str(im, "info", "version", true),
			}
		}
	}
	if v, ok := get(m, "server"); ok {
		if sm, ok := dc.object("server", v); ok {
			d.Server = &Server{
				URL:         dc.str(sm, "server", "url", true),
				Description: dc.str(sm, "server", "description", false),
			}
		}
	}
	if v, ok := dc.required(m, "", "functions"); ok {
		if fs, ok := dc.array("functions", v); ok {
			d.Functions = make([]Function, len(fs))
			for i, fv := range fs {
				dc.function(indexPath("functions", i), fv, &d.Functions[i])
			}
		}
	}
	if v, ok := get(m, "schemas"); ok {
		if sm, ok := dc.object("schemas", v); ok {
			d.Schemas = make(map[string]*Schema, len(sm))
			for name, sv := range sm {
				d.Schemas[name] = dc.schema(keyPath("schemas", name), sv)
			}
		}
	}
	return d
}

func (dc *decoder) function(path string, v any, f *Function) {
	m, ok := dc.object(path, v)
	if !ok {
		return
	}
	f.Name = dc.str(m, path, "name", true)
	f.Description = dc.str(m, path, "description", true)
	if v, ok := dc.required(m, path, "parameters"); ok {
		ppath := joinPath(path, "parameters")
		if ps, ok := dc.array(ppath, v); ok {
			f.Parameters = make([]Parameter, len(ps))
			for i, pv := range ps {
				dc.parameter(indexPath(ppath, i), pv, &f.Parameters[i])
			}
		}
	}
	if v, ok := get(m, "return"); ok {
		rpath := joinPath(path, "return")
		if rm, ok := dc.object(rpath, v); ok {
			f.Return = &Return{
				Name:        dc.str(rm, rpath, "name", true),
				Description: dc.str(rm, rpath, "description", false),
			}
			if v, ok := dc.required(rm, rpath, "schema"); ok {
				f.Return.Schema = dc.schema(joinPath(rpath, "schema"), v)
			}
		}
	}
}

func (dc *decoder) parameter(path string, v any, p *Parameter) {
	m, ok := dc.object(path, v)
	if !ok {
		return
	}
	p.Name = dc.str(m, path, "name", true)
	p.Description = dc.str(m, path, "description", false)
	if v, ok := dc.required(m, path, "schema"); ok {
		p.Schema = dc.schema(joinPath(path, "schema"), v)
	}
	// Absent means optional: see Parse.
	if v, ok := get(m, "required"); ok {
		b, ok := v.(bool)
		if !ok {
			dc.fail(joinPath(path, "required"), "want a boolean, got %s", kind(v))
		}
		p.Required = b
	}
}

// schema returns nil when v is not an object; the problem is reported.
func (dc *decoder) schema(path string, v any) *Schema {
	m, ok := dc.object(path, v)
	if !ok {
		return nil
	}
	s := &Schema{
		Ref:         dc.str(m, path, "$ref", false),
		Type:        dc.str(m, path, "type", false),
		Description: dc.str(m, path, "description", false),
	}
	if v, ok := get(m, "properties"); ok {
		ppath := joinPath(path, "properties")
		if pm, ok := dc.object(ppath, v); ok {
			s.Properties = make(map[string]*Schema, len(pm))
			for name, pv := range pm {
				s.Properties[name] = dc.schema(keyPath(ppath, name), pv)
			}
		}
	} else if s.Type == TypeObject && s.Ref == "" {
		s.Properties = map[string]*Schema{}
	}
	if v, ok := get(m, "items"); ok {
		s.Items = dc.schema(joinPath(path, "items"), v)
	}
	if v, ok := get(m, "enum"); ok {
		// The values' types are checked against the schema's by checker.
		if a, ok := dc.array(joinPath(path, "enum"), v); ok {
			s.Enum = a
		}
	}
	if v, ok := get(m, "required"); ok {
		rpath := joinPath(path, "required")
		if a, ok := dc.array(rpath, v); ok {
			s.Required = make([]string, len(a))
			for i, e := range a {
				str, ok := e.(string)
				if !ok {
					dc.fail(indexPath(rpath, i), "want a string, got %s", kind(e))
				}
				s.Required[i] = str
			}
		}
	}
	return s
}
