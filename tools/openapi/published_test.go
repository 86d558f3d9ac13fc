package openapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/devicectl/devicectl/tools"
	"github.com/devicectl/devicectl/tools/openapi"
)

// The documents in these tests are published ones, as their authors wrote
// them (testdata/README.md says where each comes from). kin-openapi alone
// refuses both: it takes the Petstore's $id references for other
// documents to read ("/api/v31/components/schemas/petdetails"), and
// mega.yaml's components.pathItems for a field components may not have.

// apiServer serves documents at their paths and answers every other
// request with reply, recording it.
type apiServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen []seen
}

// seen is one request as the API server got it.
type seen struct {
	Method, URI, ContentType, Accept, UserAgent, Authorization, APIKey, Body string
}

func newAPIServer(t *testing.T, docs map[string][]byte, reply string) *apiServer {
	t.Helper()
	s := &apiServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if doc, ok := docs[r.URL.Path]; ok {
			w.Write(doc)
			return
		}
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.seen = append(s.seen, seen{r.Method, r.RequestURI, r.Header.Get("Content-Type"), r.Header.Get("Accept"),
			r.Header.Get("User-Agent"), r.Header.Get("Authorization"), r.Header.Get("api_key"), string(b)})
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, reply)
	}))
	t.Cleanup(s.Close)
	return s
}

// requests returns the requests seen since the last call.
func (s *apiServer) requests() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.seen
	s.seen = nil
	return out
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func declarations(t *testing.T, ts *openapi.ToolSet) []string {
	t.Helper()
	var out []string
	for _, tool := range ts.Tools() {
		b, err := json.Marshal(tool.Parameters)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tool.Name+" "+string(tool.SubType)+" "+string(b))
	}
	return out
}

// Swagger Petstore's OpenAPI 3.1 document, code-first openapi.json, as
// petstore31.swagger.io serves it at /api/v31/openapi.json: its server
// "/api/v31" is relative to that URL, its Pet schema refers to PetDetails
// by $id and to a property of it by $anchor, PetDetails refers to Category
// and Tag by their relative $ids, and a webhook refers to Pet.
func TestSwaggerPetstore31(t *testing.T) {
	doc := readTestdata(t, "swagger-petstore-3.1.json")
	const reply = `{"id":7,"name":"doggie","photoUrls":[]}`
	srv := newAPIServer(t, map[string][]byte{"/api/v31/openapi.json": doc}, reply)
	var logs bytes.Buffer
	load := func(auth openapi.Auth) *openapi.ToolSet {
		t.Helper()
		ts, err := openapi.Load(context.Background(), srv.URL+"/api/v31/openapi.json", &openapi.Options{
			Auth:      auth,
			UserAgent: "devicectl/test",
			Logger:    slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		})
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	ts := load(openapi.Auth{BearerToken: bearerSecret, APIKey: apiKeySecret})

	if got, want := ts.BaseURL(), srv.URL+"/api/v31"; got != want {
		t.Errorf("BaseURL() = %q, want %q", got, want)
	}
	if got := ts.Title(); got != "Swagger Petstore - OpenAPI 3.1" {
		t.Errorf("Title() = %q", got)
	}
	if !strings.Contains(logs.String(), "webhooks ignored") || !strings.Contains(logs.String(), "newPet") {
		t.Errorf("no debug record of the webhook newPet:\n%s", logs.String())
	}
	// Category and Tag come in through their $ids, PetDetails.id through
	// its $anchor (kept beside the property's own type, as allOf), and the
	// request body's own required and writeOnly beside the $ref.
	const category = `{"properties":{"id":{"type":"integer","format":"int64"},"name":{"type":"string"}},"description":"%s"}`
	const tag = `{"properties":{"id":{"type":"integer","format":"int64"},"name":{"type":"string"}}}`
	pet := func(description string) string {
		return `{"type":"object","properties":{"body":{"properties":{` +
			`"availableInstances":{"type":"integer","examples":["7"],"exclusiveMinimum":1,"exclusiveMaximum":10,"format":"int32"},` +
			`"category":` + strings.Replace(category, "%s", "Pet Category", 1) + `,` +
			`"id":{"type":"integer","format":"int64"},` +
			`"name":{"type":"string","examples":["doggie"]},` +
			`"petDetails":{"properties":{"category":` + strings.Replace(category, "%s", "PetDetails Category", 1) + `,` +
			`"id":{"type":"integer","examples":["10"],"format":"int64"},"tag":` + tag + `}},` +
			`"petDetailsId":{"type":"integer","examples":["10"],"allOf":[{"type":"integer","format":"int64"}],"format":"int64"},` +
			`"photoUrls":{"type":"array","items":{"type":"string"}},` +
			`"status":{"type":"string","description":"pet status in the store","enum":["available","pending","sold"]},` +
			`"tags":{"type":"array","items":` + tag + `}},` +
			`"description":"` + description + `","writeOnly":true,"required":["name","photoUrls"],"allOf":[{"required":["id"]}]}},` +
			`"required":["body"],"additionalProperties":false}`
	}
	want := []string{
		"addPet control " + pet("Create a new pet in the store"),
		"updatePet control " + pet("Pet object that needs to be updated in the store"),
		`getPetById query {"type":"object","properties":{"petId":{"type":"integer","description":"ID of pet that needs to be fetched","exclusiveMinimum":1,"exclusiveMaximum":10,"format":"int64"}},"required":["petId"],"additionalProperties":false}`,
	}
	if got := declarations(t, ts); !slices.Equal(got, want) {
		t.Errorf("tools:\n got %q\nwant %q", got, want)
	}

	r := registry(t, ts)
	for _, bad := range []struct{ tool, input, want string }{
		{"getPetById", `{"petId":10}`, "tool_input.petId"},
		{"getPetById", `{"petId":1}`, "tool_input.petId"},
		{"addPet", `{"body":{"name":"doggie","photoUrls":[]}}`, `missing required property "id"`},
		{"addPet", `{"body":{"id":7,"name":"doggie","photoUrls":[],"petDetails":{"tag":{"id":"x"}}}}`, "tool_input.body.petDetails.tag.id"},
	} {
		_, err := r.Validate(bad.tool, json.RawMessage(bad.input))
		var pe *tools.ParamsError
		if !errors.As(err, &pe) || !strings.Contains(pe.Details, bad.want) {
			t.Errorf("Validate(%s, %s) = %v, want a *ParamsError with %q", bad.tool, bad.input, err, bad.want)
		}
	}

	// getPetById takes petstore_auth (oauth2: the bearer token) or
	// api_key; addPet only petstore_auth.
	const pet7 = `{"id":7,"name":"doggie","photoUrls":["http://img/7"],"petDetails":{"id":10,"tag":{"id":1,"name":"good"}}}`
	res, err := call(t, r, "getPetById", `{"petId":7}`)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(res); string(b) != reply {
		t.Errorf("getPetById result %s, want the server's %s", b, reply)
	}
	if _, err := call(t, r, "addPet", `{"body":`+pet7+`}`); err != nil {
		t.Fatal(err)
	}
	keyOnly := registry(t, load(openapi.Auth{APIKey: apiKeySecret}))
	if _, err := call(t, keyOnly, "getPetById", `{"petId":3}`); err != nil {
		t.Fatal(err)
	}
	wantSeen := []seen{
		{Method: "GET", URI: "/api/v31/pet/7", Accept: "application/json", UserAgent: "devicectl/test", Authorization: "Bearer " + bearerSecret},
		{Method: "POST", URI: "/api/v31/pet", ContentType: "application/json", Accept: "application/json", UserAgent: "devicectl/test", Authorization: "Bearer " + bearerSecret, Body: pet7},
		{Method: "GET", URI: "/api/v31/pet/3", Accept: "application/json", UserAgent: "devicectl/test", APIKey: apiKeySecret},
	}
	if got := srv.requests(); !slices.Equal(got, wantSeen) {
		t.Errorf("requests:\n got %+v\nwant %+v", got, wantSeen)
	}
}

// The OpenAPI Initiative's 3.1 test document mega.yaml: no servers,
// operations without responses, a path item without operations, and
// components.pathItems used by a webhook. Its one operation, GET /,
// becomes the tool "get"; the webhook is no tool.
func TestOAIMega31(t *testing.T) {
	doc := readTestdata(t, "oai-mega-3.1.yaml")
	srv := newAPIServer(t, nil, `{"ok":true}`)
	var logs bytes.Buffer
	ts, err := openapi.Load(context.Background(), "testdata/oai-mega-3.1.yaml", &openapi.Options{
		BaseURL: srv.URL + "/v1",
		Logger:  slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := declarations(t, ts), []string{`get query {"type":"object","properties":{},"additionalProperties":false}`}; !slices.Equal(got, want) {
		t.Errorf("tools:\n got %q\nwant %q", got, want)
	}
	if d := ts.Tools()[0].Description; d != "GET /" {
		t.Errorf("description %q, want the method and path", d)
	}
	if !strings.Contains(logs.String(), "myWebhook") {
		t.Errorf("no debug record of the webhook myWebhook:\n%s", logs.String())
	}
	if _, err := call(t, registry(t, ts), "get", `{}`); err != nil {
		t.Fatal(err)
	}
	if got, want := srv.requests(), []seen{{Method: "GET", URI: "/v1/", Accept: "application/json", UserAgent: "devicectl-openapi"}}; !slices.Equal(got, want) {
		t.Errorf("requests:\n got %+v\nwant %+v", got, want)
	}

	// The same document with its path item also mounted at /hook (the only
	// change to the published text): its request body schema, with 3.1's
	// type arrays, type null, numeric exclusive bounds, $comment, an
	// anyOf of a const, a discriminator and an unknown keyword, becomes
	// the tool's input.
	mounted := bytes.Replace(doc, []byte("  /{pathTest}: {}\n"), []byte("  /{pathTest}: {}\n  /hook:\n    $ref: '#/components/pathItems/myPathItem'\n"), 1)
	if bytes.Equal(mounted, doc) {
		t.Fatal("testdata/oai-mega-3.1.yaml changed: no /{pathTest} to add /hook after")
	}
	ts, err = openapi.FromData(mounted, &openapi.Options{BaseURL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`get query {"type":"object","properties":{},"additionalProperties":false}`,
		`post_hook control {"type":"object","properties":{"body":{"type":"object","properties":{` +
			`"arr":{"type":"array"},"either":{"type":["string","null"]},` +
			`"int":{"type":"integer","exclusiveMinimum":0,"exclusiveMaximum":100},` +
			`"none":{"type":"null"},"type":{"type":"string"}},` +
			`"anyOf":[{"type":"object","properties":{"type":{"const":"foo"}}}]}},"required":["body"],"additionalProperties":false}`,
	}
	if got := declarations(t, ts); !slices.Equal(got, want) {
		t.Errorf("tools with /hook:\n got %q\nwant %q", got, want)
	}
	r := registry(t, ts)
	if _, err := r.Validate("post_hook", json.RawMessage(`{"body":{"type":"bar"}}`)); err == nil {
		t.Error(`post_hook took {"type":"bar"}, which the anyOf of const "foo" refuses`)
	}
	const body = `{"type":"foo","int":99,"none":null,"either":null,"arr":[1,"a"]}`
	if _, err := call(t, r, "post_hook", `{"body":`+body+`}`); err != nil {
		t.Fatal(err)
	}
	if got, want := srv.requests(), []seen{{Method: "POST", URI: "/v1/hook", ContentType: "application/json", Accept: "application/json", UserAgent: "devicectl-openapi", Body: body}}; !slices.Equal(got, want) {
		t.Errorf("requests:\n got %+v\nwant %+v", got, want)
	}
}
