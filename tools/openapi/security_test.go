package openapi_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/devicectl/devicectl/tools/openapi"
)

// seenRequest is what the credentials server saw of one request.
type seenRequest struct {
	URI, Authorization, APIKey, Cookie string
}

// credServer serves docs at /specs/<name> and records the credentials
// of every other request; /api/v31/vet/records and anything under
// /deny/ answer 401 with the request URI.
func credServer(t *testing.T, docs map[string]string) (*httptest.Server, func() []seenRequest) {
	t.Helper()
	var mu sync.Mutex
	var seen []seenRequest
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if doc, ok := docs[strings.TrimPrefix(r.URL.Path, "/specs/")]; ok {
			io.WriteString(w, doc)
			return
		}
		mu.Lock()
		seen = append(seen, seenRequest{r.RequestURI, r.Header.Get("Authorization"), r.Header.Get("api_key"), r.Header.Get("Cookie")})
		mu.Unlock()
		if r.URL.Path == "/api/v31/vet/records" || strings.HasPrefix(r.URL.Path, "/deny/") {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, "who are you? %s", r.RequestURI)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{}`)
	}))
	t.Cleanup(s.Close)
	return s, func() []seenRequest {
		mu.Lock()
		defer mu.Unlock()
		out := seen
		seen = nil
		return out
	}
}

// TestSecurityPerOperation: the Petstore 3.1 shape, loaded from a URL (its
// server /api/v31 is relative), with a bearer token and an API key
// together; each operation gets exactly what its security asks for.
func TestSecurityPerOperation(t *testing.T) {
	doc, err := os.ReadFile("testdata/petstore-3.1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, seen := credServer(t, map[string]string{"shop.yaml": string(doc)})
	bearer := "Bearer " + bearerSecret
	tests := []struct {
		name   string
		auth   openapi.Auth
		calls  map[string]string      // tool: input
		want   map[string]seenRequest // tool: what the server saw
		errors map[string]string      // tool: part of the error
	}{{
		name: "token and key",
		auth: openapi.Auth{BearerToken: bearerSecret, APIKey: apiKeySecret},
		want: map[string]seenRequest{
			"updatePet":      {URI: "/api/v31/pet", Authorization: bearer},                                  // oauth2 only
			"getPetById":     {URI: "/api/v31/pet/7", Authorization: bearer},                                // first of two alternatives
			"findPetsByTags": {URI: "/api/v31/pet/findByTags", Authorization: bearer, APIKey: apiKeySecret}, // both together
			"getInventory":   {URI: "/api/v31/store/inventory", APIKey: apiKeySecret},                       // the document's security
			"health":         {URI: "/api/v31/health"},                                                      // security: []
			"vetRecords":     {URI: "/api/v31/vet/records"},                                                 // mutualTLS: nothing to send
		},
		errors: map[string]string{
			"vetRecords": "GET /vet/records: 401 Unauthorized: who are you? /api/v31/vet/records (the operation's security wants mutual_tls (mutualTLS: not supported), which the configured credentials do not meet)",
		},
	}, {
		name: "key only",
		auth: openapi.Auth{APIKey: apiKeySecret},
		want: map[string]seenRequest{
			"updatePet":      {URI: "/api/v31/pet"},
			"getPetById":     {URI: "/api/v31/pet/7", APIKey: apiKeySecret}, // the second alternative
			"findPetsByTags": {URI: "/api/v31/pet/findByTags"},
			"getInventory":   {URI: "/api/v31/store/inventory", APIKey: apiKeySecret},
			"health":         {URI: "/api/v31/health"},
		},
	}, {
		name: "token only",
		auth: openapi.Auth{BearerToken: bearerSecret},
		want: map[string]seenRequest{
			"updatePet":    {URI: "/api/v31/pet", Authorization: bearer},
			"getPetById":   {URI: "/api/v31/pet/7", Authorization: bearer},
			"getInventory": {URI: "/api/v31/store/inventory"},
			"health":       {URI: "/api/v31/health"},
		},
	}}
	inputs := map[string]string{
		"updatePet": `{"body":{"id":7,"name":"Rex"}}`, "getPetById": `{"petId":7}`, "findPetsByTags": `{}`,
		"getInventory": `{}`, "health": `{}`, "vetRecords": `{}`,
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, err := openapi.Load(context.Background(), s.URL+"/specs/shop.yaml", &openapi.Options{Auth: tt.auth})
			if err != nil {
				t.Fatal(err)
			}
			r := registry(t, ts)
			seen()
			for tool, want := range tt.want {
				_, err := call(t, r, tool, inputs[tool])
				switch {
				case tt.errors[tool] != "" && (err == nil || err.Error() != tt.errors[tool]):
					t.Errorf("%s: error %v\nwant %s", tool, err, tt.errors[tool])
				case tt.errors[tool] == "" && err != nil:
					t.Errorf("%s: %v", tool, err)
				}
				got := seen()
				if len(got) != 1 || got[0] != want {
					t.Errorf("%s: the server saw %+v, want %+v", tool, got, want)
				}
			}
		})
	}
	// The key's header, declared as a parameter too, is not the model's
	// to fill in where the key is sent, and is where it is not.
	ts, err := openapi.Load(context.Background(), s.URL+"/specs/shop.yaml", &openapi.Options{Auth: openapi.Auth{APIKey: apiKeySecret}})
	if err != nil {
		t.Fatal(err)
	}
	if got := schemaOf(t, ts, "getInventory"); strings.Contains(got, "api_key") {
		t.Errorf("getInventory sends the key, and its input still has the parameter: %s", got)
	}
	ts, err = openapi.Load(context.Background(), s.URL+"/specs/shop.yaml", &openapi.Options{Auth: openapi.Auth{BearerToken: bearerSecret}})
	if err != nil {
		t.Fatal(err)
	}
	if got := schemaOf(t, ts, "getInventory"); !strings.Contains(got, "api_key") {
		t.Errorf("getInventory does not send a key, and its input lost the parameter: %s", got)
	}
}

// An API key in a query parameter or a cookie goes where its scheme says,
// and is redacted from errors in both forms; a key in a header the document
// does not describe goes with every call but those with security: [];
// without any security requirement, everything configured is sent.
func TestSecurityPlaces(t *testing.T) {
	const doc = `openapi: 3.1.0
info: {title: Places, version: "1"}
security:
  - q: []
paths:
  /deny/q:
    get: {operationId: byQuery}
  /c:
    get:
      operationId: byCookie
      security: [{c: []}]
  /open:
    get:
      operationId: open
      security: []
  /optional:
    get:
      operationId: optional
      security: [{}, {c: []}]
components:
  securitySchemes:
    q: {type: apiKey, in: query, name: access key}
    c: {type: apiKey, in: cookie, name: sid}
    t: {type: http, scheme: bearer}
`
	const noSecurity = `openapi: 3.0.3
info: {title: Plain, version: "1"}
paths:
  /plain:
    get:
      operationId: plain
      responses: {"200": {description: OK.}}
components:
  securitySchemes:
    h: {type: apiKey, in: header, name: X-Key}
`
	const secret = "k y/+&é"
	s, seen := credServer(t, map[string]string{"places.yaml": doc, "plain.yaml": noSecurity})
	load := func(doc string, a openapi.Auth) *openapi.ToolSet {
		t.Helper()
		ts, err := openapi.Load(context.Background(), s.URL+"/specs/"+doc, &openapi.Options{BaseURL: s.URL, Auth: a})
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	check := func(ts *openapi.ToolSet, tool string, want seenRequest) error {
		t.Helper()
		seen()
		_, err := call(t, registry(t, ts), tool, `{}`)
		if got := seen(); len(got) != 1 || got[0] != want {
			t.Errorf("%s: the server saw %+v, want %+v", tool, got, want)
		}
		return err
	}

	q := load("places.yaml", openapi.Auth{APIKey: secret, APIKeyScheme: "q", BearerToken: bearerSecret})
	err := check(q, "byQuery", seenRequest{URI: "/deny/q?access%20key=k%20y%2F%2B%26%C3%A9"})
	if err == nil || strings.Contains(err.Error(), "k%20y") || !strings.Contains(err.Error(), "/deny/q?access%20key=[redacted]") {
		t.Errorf("byQuery: error %v, want the echoed key redacted", err)
	}
	check(q, "byCookie", seenRequest{URI: "/c"}) // the key is for q, not c
	check(q, "open", seenRequest{URI: "/open"})

	c := load("places.yaml", openapi.Auth{APIKey: secret, APIKeyScheme: "c"})
	check(c, "byCookie", seenRequest{URI: "/c", Cookie: "sid=k%20y%2F%2B%26%C3%A9"})
	check(c, "optional", seenRequest{URI: "/optional", Cookie: "sid=k%20y%2F%2B%26%C3%A9"}) // anonymous is only the fallback
	check(c, "byQuery", seenRequest{URI: "/deny/q"})

	// No scheme of the document sends the header api_key: the key goes
	// with every call but /open's.
	own := load("places.yaml", openapi.Auth{APIKey: apiKeySecret, APIKeyHeader: "api_key"})
	check(own, "byQuery", seenRequest{URI: "/deny/q", APIKey: apiKeySecret})
	check(own, "optional", seenRequest{URI: "/optional", APIKey: apiKeySecret})
	check(own, "open", seenRequest{URI: "/open"})

	plain := load("plain.yaml", openapi.Auth{APIKey: apiKeySecret, APIKeyHeader: "api_key", BearerToken: bearerSecret})
	check(plain, "plain", seenRequest{URI: "/plain", APIKey: apiKeySecret, Authorization: "Bearer " + bearerSecret})

	for _, tt := range []struct {
		auth openapi.Auth
		want string
	}{
		{openapi.Auth{APIKey: "k"}, `Auth.APIKey is set and the document has 2 apiKey security schemes (c (cookie "sid"), q (query "access key")): set Auth.APIKeyScheme (api_key_scheme) to the one it is for`},
		{openapi.Auth{APIKey: "k", APIKeyScheme: "t"}, `Auth.APIKeyScheme (api_key_scheme) "t" is not an apiKey security scheme of the document (its apiKey schemes: c (cookie "sid"), q (query "access key"))`},
		{openapi.Auth{APIKey: "k", APIKeyScheme: "q", APIKeyHeader: "X-Key"}, `Auth.APIKeyScheme "q" and APIKeyHeader "X-Key" are both set`},
		{openapi.Auth{APIKeyScheme: "q"}, `Auth.APIKeyScheme or APIKeyHeader is set without Auth.APIKey`},
	} {
		_, err := openapi.Load(context.Background(), s.URL+"/specs/places.yaml", &openapi.Options{BaseURL: s.URL, Auth: tt.auth})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: error %v\nwant %q in it", tt.auth, err, tt.want)
		}
	}
}

// A call that carries credentials follows no redirect to another origin: http.Client would copy a
// header such as api_key along.
func TestCredentialsNotRedirected(t *testing.T) {
	elsewhere := make(chan string, 1)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere <- r.Header.Get("api_key")
	}))
	defer other.Close()
	var api *httptest.Server
	api = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/doc.yaml" {
			fmt.Fprintf(w, `openapi: 3.0.3
info: {title: Redirects, version: "1"}
servers: [{url: %q}]
security: [{key: []}]
paths:
  /inventory:
    get:
      operationId: getInventory
      responses: {"200": {description: ok}}
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: api_key}
`, api.URL)
			return
		}
		http.Redirect(w, r, other.URL+"/inventory", http.StatusTemporaryRedirect)
	}))
	defer api.Close()
	ts, err := openapi.Load(context.Background(), api.URL+"/doc.yaml", &openapi.Options{Auth: openapi.Auth{APIKey: apiKeySecret}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = call(t, registry(t, ts), "getInventory", `{}`)
	if err == nil || !strings.Contains(err.Error(), "another origin: not followed") {
		t.Errorf("a redirect to another origin: %v, want it refused", err)
	}
	select {
	case key := <-elsewhere:
		t.Errorf("the other origin was called, with api_key %q", key)
	default:
	}
}
