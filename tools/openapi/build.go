package openapi

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
)

// operation is one operation of the document and, once built, how its tool
// turns input into a request.
type operation struct {
	path   string // the template, as in the document
	method string // upper case
	item   *openapi3.PathItem
	op     *openapi3.Operation
	name   string

	base   *url.URL
	creds  []credential // what Options.Auth sends with this operation
	wants  string       // the security requirement creds do not meet, if any
	params []*param
	body   *body // nil when the tool sends no body
}

// param is one parameter: where its value is in the input and where it
// goes in the request.
type param struct {
	prop     string // property of the input
	name     string // name in the request
	in       string // path, query, header or cookie
	style    string
	explode  bool
	reserved bool // allowReserved: query values keep RFC 3986 reserved characters
	json     bool // content is JSON: the value is sent as JSON text
}

// body is the request body of a tool.
type body struct {
	prop        string
	contentType string
}

// bodyProperty is the input property holding the JSON request body.
const bodyProperty = "body"

// operations returns every operation of the document, sorted by path and
// then method.
func operations(doc *openapi3.T) []*operation {
	var ops []*operation
	if doc.Paths == nil {
		return nil
	}
	for path, item := range doc.Paths.Map() {
		if item == nil {
			continue
		}
		for method, op := range item.Operations() {
			if op != nil {
				ops = append(ops, &operation{path: path, method: strings.ToUpper(method), item: item, op: op})
			}
		}
	}
	slices.SortFunc(ops, compareOperations)
	return ops
}

func compareOperations(a, b *operation) int {
	return cmp.Or(strings.Compare(a.path, b.path), strings.Compare(a.method, b.method))
}

// What sanitize replaces: the characters protocol.ToolNamePattern does not allow, and the runs of
// "_" that makes.
var (
	invalidRuns = regexp.MustCompile(`[^a-zA-Z0-9_-]+`)
	underscores = regexp.MustCompile(`__+`)
)

const maxName = 64

// names gives each operation a unique tool name. operationIds that are
// valid names are taken first and as they are, so that they never change
// because of another operation; the others, in order, get a sanitised
// operationId or method_path, with _2, _3, ... on a clash.
func names(ops []*operation) {
	taken := map[string]bool{}
	for _, op := range ops {
		if protocol.ValidToolName(op.op.OperationID) && !taken[op.op.OperationID] {
			op.name = op.op.OperationID
			taken[op.name] = true
		}
	}
	for _, op := range ops {
		if op.name != "" {
			continue
		}
		base := sanitize(op.op.OperationID)
		if base == "" {
			base = sanitize(strings.ToLower(op.method) + "_" + strings.NewReplacer("{", "", "}", "").Replace(op.path))
		}
		name := base
		for i := 2; taken[name]; i++ {
			suffix := "_" + strconv.Itoa(i)
			name = base[:min(len(base), maxName-len(suffix))] + suffix
		}
		op.name = name
		taken[name] = true
	}
}

// sanitize makes s a valid tool name, or returns "" if nothing of it is
// left. A name cut to 64 characters ends in a hash of all of s, so that
// two long names with a common beginning stay apart.
func sanitize(s string) string {
	n := invalidRuns.ReplaceAllString(s, "_")
	n = underscores.ReplaceAllString(n, "_")
	n = strings.Trim(n, "_")
	if strings.Trim(n, "-") == "" {
		return ""
	}
	if len(n) > maxName {
		sum := sha256.Sum256([]byte(s))
		n = strings.TrimRight(n[:maxName-9], "_") + "_" + hex.EncodeToString(sum[:4])
	}
	return n
}

// description joins summary and description, as the model reads them to
// decide when to call the tool.
func (op *operation) description() string {
	summary := strings.TrimSpace(op.op.Summary)
	desc := strings.TrimSpace(op.op.Description)
	var d string
	switch {
	case summary == "":
		d = desc
	case desc == "" || strings.HasPrefix(desc, summary):
		d = cmp.Or(desc, summary)
	default:
		d = summary + "\n\n" + desc
	}
	if d == "" {
		d = op.method + " " + op.path
	}
	if op.op.Deprecated {
		d = "Deprecated. " + d
	}
	return d
}

// ignoredHeaders are header parameters OpenAPI says to ignore: the request
// sets them itself.
var ignoredHeaders = map[string]bool{"Accept": true, "Content-Type": true, "Authorization": true}

// parameters merges the path's parameters with the operation's, the
// operation's replacing those of the same name and location. Parameters
// that the operation's credentials set are left out: documents often
// declare their API key header as a parameter, and the model must neither
// need nor see the secret.
func (op *operation) parameters() []*openapi3.Parameter {
	key := func(p *openapi3.Parameter) string {
		if p.In == openapi3.ParameterInHeader {
			return p.In + "\x00" + http.CanonicalHeaderKey(p.Name)
		}
		return p.In + "\x00" + p.Name
	}
	var out []*openapi3.Parameter
	index := map[string]int{}
	add := func(ps openapi3.Parameters) {
		for _, ref := range ps {
			if ref == nil || ref.Value == nil {
				continue
			}
			p := ref.Value
			if p.In == openapi3.ParameterInHeader && ignoredHeaders[http.CanonicalHeaderKey(p.Name)] || sets(op.creds, p.In, p.Name) {
				continue
			}
			if i, ok := index[key(p)]; ok {
				out[i] = p
				continue
			}
			index[key(p)] = len(out)
			out = append(out, p)
		}
	}
	add(op.item.Parameters)
	add(op.op.Parameters)
	return out
}

// tool builds the tool of op.
func (op *operation) tool(c *caller, o *Options) (*tools.Tool, error) {
	conv := newConverter()
	input := &jsonschema.Schema{
		Type:                 "object",
		Properties:           map[string]*jsonschema.Schema{},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}

	var rb *openapi3.RequestBody
	if op.op.RequestBody != nil {
		rb = op.op.RequestBody.Value
	}
	var bodyType string
	var bodyMedia *openapi3.MediaType
	if rb != nil {
		bodyType, bodyMedia = jsonMedia(rb.Content)
		if bodyMedia == nil && rb.Required {
			return nil, fmt.Errorf("the request body must be sent and has no JSON media type (%s)", strings.Join(slices.Sorted(maps.Keys(rb.Content)), ", "))
		}
	}

	ps := op.parameters()
	props := propertyNames(ps, bodyMedia != nil)
	op.params = nil
	for i, p := range ps {
		m, err := p.SerializationMethod()
		if err != nil {
			return nil, fmt.Errorf("parameter %q: %w", p.Name, err)
		}
		pp := &param{prop: props[i], name: p.Name, in: p.In, style: m.Style, explode: m.Explode, reserved: p.AllowReserved}
		schemaRef := p.Schema
		if schemaRef == nil && len(p.Content) > 0 {
			mt := slices.Sorted(maps.Keys(p.Content))[0]
			schemaRef = p.Content[mt].Schema
			pp.json = isJSON(mt)
		}
		s := conv.convert(schemaRef)
		if p.Description != "" {
			s.Description = p.Description
		}
		if p.Deprecated {
			s.Deprecated = true
		}
		if p.Example != nil && s.Examples == nil {
			s.Examples = []any{p.Example}
		}
		input.Properties[pp.prop] = s
		input.PropertyOrder = append(input.PropertyOrder, pp.prop)
		if p.Required || p.In == openapi3.ParameterInPath {
			input.Required = append(input.Required, pp.prop)
		}
		op.params = append(op.params, pp)
	}

	op.body = nil
	if bodyMedia != nil {
		s := conv.convert(bodyMedia.Schema)
		if d := strings.TrimSpace(rb.Description); d != "" {
			s.Description = d
		}
		input.Properties[bodyProperty] = s
		input.PropertyOrder = append(input.PropertyOrder, bodyProperty)
		if rb.Required {
			input.Required = append(input.Required, bodyProperty)
		}
		op.body = &body{prop: bodyProperty, contentType: bodyType}
	} else if rb != nil {
		c.logger.Debug("optional request body without a JSON media type left out", "tool", op.name)
	}
	if err := conv.finish(input); err != nil {
		return nil, err
	}

	st := tools.Control
	if op.method == http.MethodGet || op.method == http.MethodHead {
		st = tools.Query
	}
	if o.SubTypes[op.name] != "" {
		st = o.SubTypes[op.name]
	}
	return &tools.Tool{
		Declaration: tools.Declaration{
			Name:        op.name,
			Description: op.description(),
			MainType:    tools.Remote,
			SubType:     st,
			Parameters:  input,
		},
		Timeout: c.timeout,
		Handler: func(ctx context.Context, in json.RawMessage) (any, error) { return c.call(ctx, op, in) },
	}, nil
}

// propertyNames gives each parameter its input property: its own name,
// or "<in>_<name>" when another location has a parameter of the same name
// or the name is that of the body. A name still taken after that (a
// parameter literally named "query_id") gets _2, _3, ...
func propertyNames(ps []*openapi3.Parameter, hasBody bool) []string {
	count := map[string]int{}
	for _, p := range ps {
		count[p.Name]++
	}
	taken := map[string]bool{}
	if hasBody {
		taken[bodyProperty] = true
		count[bodyProperty]++
	}
	props := make([]string, len(ps))
	// Unprefixed names first, so that they stay unprefixed whatever the
	// order of the parameters.
	for i, p := range ps {
		if count[p.Name] == 1 && !taken[p.Name] {
			props[i] = p.Name
			taken[p.Name] = true
		}
	}
	for i, p := range ps {
		if props[i] != "" {
			continue
		}
		base := p.In + "_" + p.Name
		name := base
		for n := 2; taken[name]; n++ {
			name = base + "_" + strconv.Itoa(n)
		}
		props[i] = name
		taken[name] = true
	}
	return props
}

// isJSON reports whether a media type (possibly with parameters) is JSON.
func isJSON(mediaType string) bool {
	mt, _, err := mime.ParseMediaType(mediaType)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// jsonMedia returns the JSON media type of a request body, preferring
// application/json.
func jsonMedia(content openapi3.Content) (string, *openapi3.MediaType) {
	if m := content["application/json"]; m != nil {
		return "application/json", m
	}
	for _, mt := range slices.Sorted(maps.Keys(content)) {
		if isJSON(mt) && !strings.Contains(mt, "*") {
			return mt, content[mt]
		}
	}
	return "", nil
}
