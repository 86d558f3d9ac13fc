package openapi

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// servers picks the base URL of each operation.
type servers struct {
	override bool     // Options.BaseURL is set: root is used for everything
	root     *url.URL // nil when the document's servers cannot give one
	rootErr  error    // why root is nil
	vars     map[string]string
	docURL   *url.URL // set when the document was loaded from http(s)
}

func newServers(doc *openapi3.T, o *Options, src *source) (*servers, error) {
	s := &servers{vars: o.ServerVariables}
	if src.remote {
		s.docURL = src.url
	}
	if o.BaseURL != "" {
		u, err := url.Parse(o.BaseURL)
		if err != nil {
			return nil, fmt.Errorf("BaseURL: %w", err)
		}
		if !u.IsAbs() || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("BaseURL %q is not an absolute http or https URL", o.BaseURL)
		}
		s.override = true
		s.root = trimBase(u)
	}
	// Every variable the caller sets must exist somewhere, so that a typo
	// does not silently leave the default in place.
	declared := map[string]bool{}
	declare := func(ss openapi3.Servers) {
		for _, sv := range ss {
			if sv != nil {
				for name := range sv.Variables {
					declared[name] = true
				}
			}
		}
	}
	declare(doc.Servers)
	if doc.Paths != nil {
		for _, item := range doc.Paths.Map() {
			if item == nil {
				continue
			}
			declare(item.Servers)
			for _, op := range item.Operations() {
				if op.Servers != nil {
					declare(*op.Servers)
				}
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(o.ServerVariables)) {
		if !declared[name] {
			return nil, fmt.Errorf("ServerVariables: no server declares a variable %q (declared: %s)", name, strings.Join(slices.Sorted(maps.Keys(declared)), ", "))
		}
	}
	if !s.override {
		s.root, s.rootErr = s.pick(doc.Servers, "servers")
	}
	return s, nil
}

// forOperation returns the base URL of an operation: the first of the
// operation's servers, else of its path's, else of the document's (the
// precedence OpenAPI defines).
func (s *servers) forOperation(item *openapi3.PathItem, op *openapi3.Operation) (*url.URL, error) {
	switch {
	case s.override:
		return s.root, nil
	case op.Servers != nil && len(*op.Servers) > 0:
		return s.pick(*op.Servers, "operation servers")
	case len(item.Servers) > 0:
		return s.pick(item.Servers, "path servers")
	case s.root == nil:
		return nil, s.rootErr
	}
	return s.root, nil
}

// pick returns the first server's URL with its variables substituted and,
// when relative, resolved against the document's URL.
func (s *servers) pick(list openapi3.Servers, what string) (*url.URL, error) {
	raw := "/" // OpenAPI's default when there are no servers
	var sv *openapi3.Server
	if len(list) > 0 && list[0] != nil {
		sv = list[0]
		raw = sv.URL
	}
	if sv != nil {
		for _, name := range slices.Sorted(maps.Keys(sv.Variables)) {
			v := sv.Variables[name]
			value := v.Default
			if o, ok := s.vars[name]; ok {
				if len(v.Enum) > 0 && !slices.Contains(v.Enum, o) {
					return nil, fmt.Errorf("ServerVariables: %q is %q, not one of %s", name, o, strings.Join(v.Enum, ", "))
				}
				value = o
			}
			raw = strings.ReplaceAll(raw, "{"+name+"}", value)
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: URL %q: %w", what, raw, err)
	}
	if !u.IsAbs() {
		if s.docURL == nil {
			return nil, fmt.Errorf("%s: URL %q is relative and the document was not loaded from a URL: set base_url to the API's absolute URL", what, raw)
		}
		u = s.docURL.ResolveReference(u)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("%s: URL %q is not an http or https URL", what, raw)
	}
	return trimBase(u), nil
}

// trimBase drops what a base URL cannot carry (query, fragment) and the
// trailing slash, so that an operation's path can be appended as is.
func trimBase(u *url.URL) *url.URL {
	b := *u
	b.RawQuery, b.Fragment, b.RawFragment = "", "", ""
	b.Path = strings.TrimSuffix(b.Path, "/")
	b.RawPath = strings.TrimSuffix(b.RawPath, "/")
	return &b
}
