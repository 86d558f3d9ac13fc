package openapi

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// credential is one secret as a request carries it.
type credential struct {
	in    string // header, query or cookie
	name  string // the header, query parameter or cookie name
	value string // as sent: "Bearer <token>" for Authorization
}

// security decides which credentials of Options.Auth each operation sends,
// from the document's securitySchemes and security requirements (see
// "Credentials" in the package documentation).
type security struct {
	schemes map[string]*openapi3.SecurityScheme
	bearer  *credential // nil: no bearer token
	apiKey  *credential // nil: no API key
	// keyScheme is the apiKey scheme the API key belongs to; empty when
	// no scheme describes it.
	keyScheme string
	// loose are credentials no scheme of the document describes: the
	// document's requirements cannot say where they go, so they go with
	// every operation except those that declare security: [].
	loose []credential
	// all is what an operation gets when the document declares no
	// security requirement, for it or as a whole.
	all     []credential
	secrets []string
}

func newSecurity(doc *openapi3.T, a Auth) (*security, error) {
	s := &security{schemes: map[string]*openapi3.SecurityScheme{}}
	if doc.Components != nil {
		for name, ref := range doc.Components.SecuritySchemes {
			if ref != nil && ref.Value != nil {
				s.schemes[name] = ref.Value
			}
		}
	}
	if a.BearerToken != "" {
		s.bearer = &credential{in: "header", name: "Authorization", value: "Bearer " + a.BearerToken}
		s.secrets = append(s.secrets, a.BearerToken)
		s.all = append(s.all, *s.bearer)
		if !slices.ContainsFunc(slices.Collect(maps.Values(s.schemes)), takesBearer) {
			s.loose = append(s.loose, *s.bearer)
		}
	}
	if a.APIKey == "" {
		if a.APIKeyScheme != "" || a.APIKeyHeader != "" {
			return nil, errors.New("Auth.APIKeyScheme or APIKeyHeader is set without Auth.APIKey")
		}
		return s, nil
	}
	s.secrets = append(s.secrets, a.APIKey)
	var keySchemes []string
	for _, name := range slices.Sorted(maps.Keys(s.schemes)) {
		if s.schemes[name].Type == "apiKey" {
			keySchemes = append(keySchemes, name)
		}
	}
	describe := func() string {
		if len(keySchemes) == 0 {
			return "none"
		}
		var d []string
		for _, n := range keySchemes {
			d = append(d, fmt.Sprintf("%s (%s %q)", n, s.schemes[n].In, s.schemes[n].Name))
		}
		return strings.Join(d, ", ")
	}
	switch {
	case a.APIKeyScheme != "" && a.APIKeyHeader != "":
		return nil, fmt.Errorf("Auth.APIKeyScheme %q and APIKeyHeader %q are both set: the scheme says where the key goes, set one", a.APIKeyScheme, a.APIKeyHeader)
	case a.APIKeyScheme != "":
		if !slices.Contains(keySchemes, a.APIKeyScheme) {
			return nil, fmt.Errorf("Auth.APIKeyScheme (api_key_scheme) %q is not an apiKey security scheme of the document (its apiKey schemes: %s)", a.APIKeyScheme, describe())
		}
		s.keyScheme = a.APIKeyScheme
	case a.APIKeyHeader != "":
		if !validHeaderName(a.APIKeyHeader) {
			return nil, fmt.Errorf("Auth.APIKeyHeader (api_key_header) %q is not a valid header name", a.APIKeyHeader)
		}
		for _, n := range keySchemes {
			if ss := s.schemes[n]; ss.In == "header" && strings.EqualFold(ss.Name, a.APIKeyHeader) {
				s.keyScheme = n
				break
			}
		}
		if s.keyScheme == "" {
			// A header the document does not describe: the caller knows
			// better than the document, so it goes with every call.
			s.apiKey = &credential{in: "header", name: a.APIKeyHeader, value: a.APIKey}
			s.loose = append(s.loose, *s.apiKey)
		}
	case len(keySchemes) == 1:
		s.keyScheme = keySchemes[0]
	case len(keySchemes) == 0:
		return nil, errors.New("Auth.APIKey is set and the document has no apiKey security scheme to say where it goes: set Auth.APIKeyHeader (api_key_header) to send it in a header")
	default:
		return nil, fmt.Errorf("Auth.APIKey is set and the document has %d apiKey security schemes (%s): set Auth.APIKeyScheme (api_key_scheme) to the one it is for", len(keySchemes), describe())
	}
	if s.keyScheme != "" {
		ss := s.schemes[s.keyScheme]
		if ss.In != "header" && ss.In != "query" && ss.In != "cookie" {
			return nil, fmt.Errorf("security scheme %q: apiKey in %q is not header, query or cookie", s.keyScheme, ss.In)
		}
		if ss.In == "header" && !validHeaderName(ss.Name) {
			return nil, fmt.Errorf("security scheme %q: %q is not a valid header name", s.keyScheme, ss.Name)
		}
		s.apiKey = &credential{in: ss.In, name: ss.Name, value: a.APIKey}
	}
	s.all = append(s.all, *s.apiKey)
	return s, nil
}

// takesBearer reports whether a bearer token satisfies a scheme: HTTP
// bearer authentication, and OAuth 2 and OpenID Connect, whose access
// tokens are sent as bearer tokens.
func takesBearer(ss *openapi3.SecurityScheme) bool {
	switch ss.Type {
	case "http":
		return strings.EqualFold(ss.Scheme, "bearer")
	case "oauth2", "openIdConnect":
		return true
	}
	return false
}

// forOperation returns the credentials op sends and, when its security
// requirements cannot be met with those configured, what they ask for (for
// the error of a refused call).
//
// The operation's security replaces the document's; an empty list means no
// credentials. Of the alternatives, the first whose every scheme has a
// credential is used, and only its schemes' credentials are sent; an empty
// alternative ({}, "anonymous allowed") is used only when no other is met.
func (s *security) forOperation(doc *openapi3.T, op *openapi3.Operation) (creds []credential, wants string) {
	var reqs openapi3.SecurityRequirements
	switch {
	case op.Security != nil:
		reqs = *op.Security
	case doc.Security != nil:
		reqs = doc.Security
	default:
		return s.all, ""
	}
	if len(reqs) == 0 {
		return nil, ""
	}
	anonymous := false
	for _, req := range reqs {
		if len(req) == 0 {
			anonymous = true
			continue
		}
		if creds, ok := s.satisfy(req); ok {
			return merge(creds, s.loose), ""
		}
	}
	if anonymous {
		return s.loose, ""
	}
	var alts []string
	for _, req := range reqs {
		var all []string
		for _, name := range slices.Sorted(maps.Keys(req)) {
			all = append(all, s.describe(name))
		}
		alts = append(alts, strings.Join(all, " and "))
	}
	return s.loose, strings.Join(alts, ", or ")
}

// satisfy returns the credentials of the schemes of one security
// requirement, and whether there is one for each.
func (s *security) satisfy(req openapi3.SecurityRequirement) ([]credential, bool) {
	var creds []credential
	for _, name := range slices.Sorted(maps.Keys(req)) {
		ss := s.schemes[name]
		switch {
		case ss == nil:
			return nil, false
		case ss.Type == "apiKey" && name == s.keyScheme:
			creds = merge(creds, []credential{*s.apiKey})
		case takesBearer(ss) && s.bearer != nil:
			creds = merge(creds, []credential{*s.bearer})
		default:
			return nil, false
		}
	}
	return creds, true
}

// describe names a scheme and the credential it takes, for errors.
func (s *security) describe(name string) string {
	ss := s.schemes[name]
	switch {
	case ss == nil:
		return name
	case ss.Type == "apiKey":
		return fmt.Sprintf("%s (an API key in %s %q)", name, ss.In, ss.Name)
	case takesBearer(ss):
		return fmt.Sprintf("%s (%s: a bearer token)", name, ss.Type)
	case ss.Type == "http":
		return fmt.Sprintf("%s (http %s: not supported)", name, ss.Scheme)
	}
	return fmt.Sprintf("%s (%s: not supported)", name, ss.Type)
}

// merge appends the credentials of b that a does not already send.
func merge(a, b []credential) []credential {
	out := slices.Clone(a)
	for _, c := range b {
		if !slices.ContainsFunc(out, func(o credential) bool { return o.sameSlot(c) }) {
			out = append(out, c)
		}
	}
	return out
}

// sameSlot reports whether two credentials go to the same place.
func (c credential) sameSlot(o credential) bool {
	if c.in != o.in {
		return false
	}
	if c.in == "header" {
		return http.CanonicalHeaderKey(c.name) == http.CanonicalHeaderKey(o.name)
	}
	return c.name == o.name
}

// sets reports whether one of creds fills the parameter in, name: such a
// parameter is left out of the tool's input.
func sets(creds []credential, in, name string) bool {
	return slices.ContainsFunc(creds, func(c credential) bool { return c.sameSlot(credential{in: in, name: name}) })
}
