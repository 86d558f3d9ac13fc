package openapi

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/devicectl/devicectl/internal/safefile"
	"github.com/devicectl/devicectl/tools"
)

// DefaultTimeout bounds one call when Options.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// DefaultUserAgent is the User-Agent header sent when Options.UserAgent is
// empty.
const DefaultUserAgent = "devicectl-openapi"

// maxDocument caps what Load reads of a document or of a file it refers to:
// a device has little memory, and a specification larger than this is not
// one anybody means to turn into tools.
const maxDocument = 16 << 20

// Options configure Load and FromData. A nil *Options means the defaults;
// the struct is copied, so the caller may reuse it.
type Options struct {
	// BaseURL, when set, is where every call goes instead of the
	// document's servers: an absolute http or https URL whose path is put
	// in front of every operation's path.
	// Errors that ask for it name devicectl's config key, base_url.
	BaseURL string

	// ServerVariables override the defaults of the variables of the
	// servers' URL templates, e.g. {"port": "8443"}. A name that no server
	// of the document declares is an error, and so is a value outside a
	// variable's enum.
	ServerVariables map[string]string

	// Auth is the credentials; each call sends those its operation's
	// security requirement asks for (see "Credentials" in the package
	// documentation).
	Auth Auth

	// Timeout bounds one call, from sending the request to reading the
	// response. Zero means DefaultTimeout. It is also the tools' Timeout.
	Timeout time.Duration

	// UserAgent is sent as the User-Agent header of every call and of the
	// requests that fetch the document; empty means DefaultUserAgent.
	// devicectl sends "devicectl/VERSION", as its OpenTool client does.
	UserAgent string

	// HTTPClient sends the calls and, for Load, fetches the document. Nil
	// means a client with http.DefaultTransport and no timeout of its own.
	HTTPClient *http.Client

	// Include limits the set to these tool names. A name that is not in
	// the document is an error that lists the names that are.
	Include []string

	// SubTypes sets the sub_type of the named tools. The default is
	// tools.Query for GET and HEAD, which only read, and tools.Control
	// for every other method. A name that is not in the set is an error.
	SubTypes map[string]tools.SubType

	// Logger receives what the set does: one Debug record per call and a
	// Warn record per operation that could not become a tool. Nil
	// discards. Secrets are never logged.
	Logger *slog.Logger
}

// Auth holds the credentials of a set. Either or both may be set; which
// of them a call sends is decided per operation by its security
// requirements. The token and key never appear in logs or errors: a server
// that echoes them in an error body has them replaced by "[redacted]".
type Auth struct {
	// BearerToken is sent as "Authorization: Bearer <token>" for the
	// document's security schemes of type http with scheme bearer, oauth2
	// (an access token) and openIdConnect.
	BearerToken string

	// APIKey is sent for an apiKey security scheme, in the header, query
	// parameter or cookie the scheme names: the scheme APIKeyScheme
	// names, else the one whose header is APIKeyHeader, else the
	// document's only apiKey scheme. A document with several, and neither
	// field set, is an error. When APIKeyHeader names a header no scheme
	// of the document uses, the key is sent in it with every call, except
	// to operations whose security is [].
	APIKey       string
	APIKeyScheme string // a key of components.securitySchemes
	APIKeyHeader string
}

// String redacts the secrets, so that logging an Options cannot leak them.
func (a Auth) String() string {
	var parts []string
	if a.BearerToken != "" {
		parts = append(parts, "bearer:[redacted]")
	}
	if a.APIKey != "" {
		parts = append(parts, fmt.Sprintf("apikey(%s):[redacted]", cmp.Or(a.APIKeyScheme, a.APIKeyHeader, "from document")))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// GoString redacts the secrets from %#v as well.
func (a Auth) GoString() string { return "openapi.Auth" + a.String() }

// LogValue redacts the secrets from slog output.
func (a Auth) LogValue() slog.Value { return slog.StringValue(a.String()) }

// withDefaults returns a copy of opts with the defaults filled in.
func (opts *Options) withDefaults() *Options {
	var o Options
	if opts != nil {
		o = *opts
	}
	o.ServerVariables = maps.Clone(o.ServerVariables)
	o.Include = slices.Clone(o.Include)
	o.SubTypes = maps.Clone(o.SubTypes)
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.Logger = o.Logger.With("component", "openapi")
	return &o
}

// ToolSet is the tools made from one OpenAPI document.
type ToolSet struct {
	title   string
	baseURL string
	tools   []*tools.Tool
	skipped []Skipped
}

// Skipped is an operation of the document that did not become a tool.
type Skipped struct {
	Name   string // the tool name it would have had
	Method string
	Path   string
	Reason string
}

// Tools returns the tools, sorted by path and then method. The slice is the
// caller's; the tools are shared and must not be modified.
func (ts *ToolSet) Tools() []*tools.Tool { return slices.Clone(ts.tools) }

// Names returns the tools' names in the order of Tools.
func (ts *ToolSet) Names() []string {
	names := make([]string, len(ts.tools))
	for i, t := range ts.tools {
		names[i] = t.Name
	}
	return names
}

// BaseURL returns the URL the calls go to: Options.BaseURL or the first of
// the document's servers, with its variables substituted. An operation
// with servers of its own (or of its path) uses those instead. It is empty
// when no operation uses it.
func (ts *ToolSet) BaseURL() string { return ts.baseURL }

// Title returns the document's info.title.
func (ts *ToolSet) Title() string { return ts.title }

// Skipped returns the operations that did not become tools, and why: a
// request body that must be sent but has no JSON media type, or a schema
// the tools package refuses.
func (ts *ToolSet) Skipped() []Skipped { return slices.Clone(ts.skipped) }

// Load reads the OpenAPI 3.0 or 3.1 document at location, a file path or an
// http(s) URL, in JSON or YAML, and makes a tool of each operation.
//
// References to other files are followed when they are of the same kind
// as location: files next to a file, URLs of the same scheme and host as a
// URL. A relative server URL is resolved against a location that is a URL.
func Load(ctx context.Context, location string, opts *Options) (*ToolSet, error) {
	o := opts.withDefaults()
	if err := checkUserAgent(o.UserAgent); err != nil {
		return nil, fmt.Errorf("openapi: %s: %w", location, err)
	}
	src := &source{name: location, userAgent: o.UserAgent}
	if isHTTP(location) {
		u, err := url.Parse(location)
		if err != nil {
			return nil, fmt.Errorf("openapi: %s: %w", location, err)
		}
		src.url = u
		src.remote = true
		src.client = o.HTTPClient
	} else {
		abs, err := filepath.Abs(location)
		if err != nil {
			return nil, fmt.Errorf("openapi: %s: %w", location, err)
		}
		src.url = &url.URL{Path: filepath.ToSlash(abs)}
	}
	data, err := src.read(ctx, src.url)
	if err != nil {
		return nil, fmt.Errorf("openapi: %s: %w", location, err)
	}
	return build(ctx, data, src, o)
}

// FromData is Load for a document already in memory. Its references must
// all be local ("#/components/..."), and its servers absolute, unless
// Options.BaseURL is set.
func FromData(data []byte, opts *Options) (*ToolSet, error) {
	o := opts.withDefaults()
	if err := checkUserAgent(o.UserAgent); err != nil {
		return nil, fmt.Errorf("openapi: inline document: %w", err)
	}
	return build(context.Background(), data, &source{name: "inline document"}, o)
}

// checkUserAgent refuses a User-Agent that would break the header.
func checkUserAgent(ua string) error {
	if strings.ContainsFunc(ua, unicode.IsControl) {
		return fmt.Errorf("UserAgent %q holds a control character", ua)
	}
	return nil
}

func isHTTP(location string) bool {
	l := strings.ToLower(location)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

// source is where a document comes from, and decides which other documents
// its references may read.
type source struct {
	name   string   // for errors: the location as the caller gave it
	url    *url.URL // nil for FromData
	remote bool
	client *http.Client
	// userAgent is sent when fetching a remote document.
	userAgent string
}

// read fetches one document, capped at maxDocument.
func (src *source) read(ctx context.Context, u *url.URL) ([]byte, error) {
	var body io.ReadCloser
	if src.remote {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/json, application/yaml;q=0.9, */*;q=0.5")
		req.Header.Set("User-Agent", src.userAgent)
		resp, err := src.client.Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return nil, fmt.Errorf("GET %s: %s", u.Redacted(), statusText(resp.StatusCode))
		}
		body = resp.Body
	} else {
		// safefile: a FIFO or a device named as the document would hang start and reload.
		f, err := safefile.Open(filepath.FromSlash(u.Path))
		if err != nil {
			return nil, err
		}
		body = f
	}
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(body, maxDocument+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxDocument {
		return nil, fmt.Errorf("%s is larger than %d bytes", u.Redacted(), maxDocument)
	}
	return data, nil
}

// readRef is the loader's ReadFromURIFunc. It owns the policy for external
// references (see Load): kin-openapi's default would read any file or URL a
// document names, with http.DefaultClient and no context.
func (src *source) readRef(ctx context.Context) openapi3.ReadFromURIFunc {
	return func(_ *openapi3.Loader, u *url.URL) ([]byte, error) {
		switch {
		case src.url == nil:
			return nil, fmt.Errorf("reference to %s: a document given as data may only refer to itself", u.Redacted())
		case src.remote:
			if u.Scheme != src.url.Scheme || u.Host != src.url.Host {
				return nil, fmt.Errorf("reference to %s: only URLs on %s://%s may be referred to", u.Redacted(), src.url.Scheme, src.url.Host)
			}
		case u.Scheme != "" && u.Scheme != "file" || u.Host != "":
			return nil, fmt.Errorf("reference to %s: a file may only refer to other files", u.Redacted())
		}
		return src.read(ctx, u)
	}
}

// validationOptions relax kin-openapi's checks where real-world documents
// commonly break them without making their operations uncallable:
//
//   - examples and defaults that do not match their schema: the tools
//     never send either (the server applies its own default);
//   - patterns Go's regexp cannot compile (OpenAPI patterns are ECMA-262,
//     lookaheads are common): such a pattern is dropped from the tool's
//     schema and the server still checks it.
//
// Everything else is checked: structure, references, path templates
// against path parameters, parameter styles, unique operationIds.
var validationOptions = []openapi3.ValidationOption{
	openapi3.DisableExamplesValidation(),
	openapi3.DisableSchemaDefaultsValidation(),
	openapi3.DisableSchemaPatternValidation(),
}

// parse loads and validates a document.
func parse(ctx context.Context, data []byte, src *source, log *slog.Logger) (*openapi3.T, error) {
	data, rewritten, err := rewrite31(data, src.url, log)
	if err != nil {
		return nil, fmt.Errorf("openapi: %s: %w", src.name, err)
	}
	doc, err := load(ctx, data, src, false)
	invalid := false
	if err == nil {
		if doc.OpenAPI == "" {
			err = errors.New(`no "openapi" version field: not an OpenAPI 3 document (convert Swagger 2.0 first)`)
		} else if v := doc.OpenAPIMajorMinor(); v != "3.0" && v != "3.1" {
			err = fmt.Errorf("openapi version %q is not supported (want 3.0.x or 3.1.x)", doc.OpenAPI)
		} else {
			err = doc.Validate(ctx, validationOptions...)
			invalid = err != nil
		}
	}
	if err == nil {
		return doc, nil
	}
	// Only an invalid document pays for line numbers: tracking them costs
	// memory for every element. Those of a rewritten document would not
	// be the file's; its errors name the place by its path instead.
	if invalid && !rewritten {
		if doc, err2 := load(ctx, data, src, true); err2 == nil {
			if err2 = doc.Validate(ctx, validationOptions...); err2 != nil {
				err = err2
			}
		}
	}
	if loc := originOf(err); loc != nil && loc.Line > 0 {
		return nil, fmt.Errorf("openapi: %s: line %d: %w", src.name, loc.Line, err)
	}
	return nil, fmt.Errorf("openapi: %s: %w", src.name, err)
}

func load(ctx context.Context, data []byte, src *source, origin bool) (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	loader.Context = ctx
	loader.IncludeOrigin = origin
	loader.IsExternalRefsAllowed = src.url != nil
	loader.ReadFromURIFunc = src.readRef(ctx)
	var doc *openapi3.T
	var err error
	if src.url == nil {
		doc, err = loader.LoadFromData(data)
	} else {
		doc, err = loader.LoadFromDataWithPath(data, src.url)
	}
	if err == nil && doc.OpenAPIMajorMinor() == "3.1" {
		dropUnknownKeywords(doc)
	}
	return doc, err
}

var originType = reflect.TypeFor[*openapi3.Origin]()

// originOf finds where in the document a validation error is: the
// innermost error of the chain that carries an Origin field (kin-openapi's
// error types do, without a common interface to read it).
func originOf(err error) *openapi3.Location {
	var found *openapi3.Location
	for e := err; e != nil; {
		v := reflect.ValueOf(e)
		for v.Kind() == reflect.Pointer && !v.IsNil() {
			v = v.Elem()
		}
		if v.Kind() == reflect.Struct {
			if f := v.FieldByName("Origin"); f.IsValid() && f.Type() == originType && !f.IsNil() {
				if o := f.Interface().(*openapi3.Origin); o.Key != nil {
					found = o.Key
				}
			}
		}
		switch x := e.(type) {
		case openapi3.MultiError:
			if len(x) == 0 {
				return found
			}
			e = x[0]
		case interface{ Unwrap() []error }:
			errs := x.Unwrap()
			if len(errs) == 0 {
				return found
			}
			e = errs[0]
		default:
			e = errors.Unwrap(e)
		}
	}
	return found
}

// build turns a document into a ToolSet.
func build(ctx context.Context, data []byte, src *source, o *Options) (*ToolSet, error) {
	doc, err := parse(ctx, data, src, o.Logger)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*ToolSet, error) {
		return nil, fmt.Errorf("openapi: %s: %w", src.name, err)
	}
	ops := operations(doc)
	names(ops)
	available := make(map[string]*operation, len(ops))
	for _, op := range ops {
		available[op.name] = op
	}
	selected := ops
	if o.Include != nil {
		selected = nil
		for _, name := range o.Include {
			op := available[name]
			if op == nil {
				return fail(fmt.Errorf("Include: no operation is named %q (available: %s)", name, strings.Join(sortedNames(ops), ", ")))
			}
			if !slices.Contains(selected, op) {
				selected = append(selected, op)
			}
		}
		slices.SortFunc(selected, compareOperations)
	}
	for _, name := range slices.Sorted(maps.Keys(o.SubTypes)) {
		st := o.SubTypes[name]
		if available[name] == nil {
			return fail(fmt.Errorf("SubTypes: no operation is named %q (available: %s)", name, strings.Join(sortedNames(ops), ", ")))
		}
		if st != tools.Query && st != tools.Control {
			return fail(fmt.Errorf("SubTypes: %q: sub type %q is not %q or %q", name, st, tools.Query, tools.Control))
		}
	}
	srv, err := newServers(doc, o, src)
	if err != nil {
		return fail(err)
	}
	sec, err := newSecurity(doc, o.Auth)
	if err != nil {
		return fail(err)
	}
	c := &caller{client: o.HTTPClient, credClient: sameOriginClient(o.HTTPClient), timeout: o.Timeout, secrets: sec.secrets, userAgent: o.UserAgent, logger: o.Logger}
	ts := &ToolSet{}
	if doc.Info != nil {
		ts.title = doc.Info.Title
	}
	// Each tool is added to a scratch registry so that one the device's
	// registry would refuse is found here, where it can be skipped with a
	// reason, rather than when the caller registers the set.
	check := tools.NewRegistry()
	for _, op := range selected {
		// Unlike a schema, a base URL comes from the document as a whole and
		// the options: when one is missing, every call would fail.
		op.base, err = srv.forOperation(op.item, op.op)
		if err != nil {
			return fail(fmt.Errorf("%s %s (%s): %w", op.method, op.path, op.name, err))
		}
		op.creds, op.wants = sec.forOperation(doc, op.op)
		t, err := op.tool(c, o)
		if err == nil {
			err = check.Add(t)
		}
		if err != nil {
			if o.Include != nil {
				return fail(fmt.Errorf("%s %s (%s): %w", op.method, op.path, op.name, err))
			}
			o.Logger.Warn("operation skipped", "tool", op.name, "method", op.method, "path", op.path, "reason", err)
			ts.skipped = append(ts.skipped, Skipped{Name: op.name, Method: op.method, Path: op.path, Reason: err.Error()})
			continue
		}
		ts.tools = append(ts.tools, t)
		if op.base == srv.root {
			ts.baseURL = srv.root.String()
		}
	}
	o.Logger.Debug("loaded", "document", src.name, "tools", len(ts.tools), "skipped", len(ts.skipped), "base_url", ts.baseURL)
	return ts, nil
}

func sortedNames(ops []*operation) []string {
	var names []string
	for _, op := range ops {
		names = append(names, op.name)
	}
	slices.Sort(names)
	return names
}

func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// sameOriginClient returns a copy of c that refuses a redirect to another scheme or host, and
// otherwise follows redirects as c does.
func sameOriginClient(c *http.Client) *http.Client {
	cc := *c
	check := c.CheckRedirect
	cc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if first := via[0].URL; req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
			return fmt.Errorf("redirected to %s://%s, another origin: not followed, as the call carries credentials", req.URL.Scheme, req.URL.Host)
		}
		if check != nil {
			return check(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &cc
}
