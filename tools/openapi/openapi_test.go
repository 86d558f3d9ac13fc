package openapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/devicectl/devicectl/tools"
	"github.com/devicectl/devicectl/tools/openapi"
)

const (
	bearerSecret = "s3cr3t-bearer-token"
	apiKeySecret = "k3y-0f-the-st0re"
)

// request is what the test server saw of one request.
type request struct {
	Method string
	URI    string            // RequestURI: the escaped path and raw query as sent
	Header map[string]string // the headers a case names, and only those
	Cookie string
	Body   string
}

// server is an HTTP server that records every request and answers the
// petstore and arm documents' operations.
type server struct {
	*httptest.Server
	mu      sync.Mutex
	reqs    []*http.Request
	bodies  []string
	release chan struct{} // closed to let /slow answer
}

func newServer(t *testing.T, specs map[string]string) *server {
	t.Helper()
	s := &server{release: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if spec, ok := specs[r.URL.Path]; ok {
			w.Header().Set("Content-Type", "application/yaml")
			io.WriteString(w, spec)
			return
		}
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, r)
		s.bodies = append(s.bodies, string(b))
		s.mu.Unlock()
		s.answer(w, r)
	}))
	t.Cleanup(func() {
		close(s.release)
		s.Close()
	})
	return s
}

func (s *server) answer(w http.ResponseWriter, r *http.Request) {
	path := r.URL.EscapedPath()
	jsonBody := func(code int, body string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
	switch {
	case path == "/v1/slow":
		select {
		case <-r.Context().Done():
		case <-s.release:
		}
	case path == "/v1/whoami":
		// A careless server that echoes the credentials, with control
		// characters and more text than an error message should carry.
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, "bad credentials\r\n\tauth=%q key=%q\x00\x1b[31m %s", r.Header.Get("Authorization"), r.Header.Get("X-API-Key"), strings.Repeat("é", 200))
	case path == "/v1/pets/7":
		jsonBody(http.StatusNotFound, `{"message":"no such pet"}`)
	case path == "/v1/pets/1/toys":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ball\nrope\n")
	case strings.HasPrefix(path, "/v1/pets/1/photos/"):
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write([]byte{0xff, 0xd8, 0xff, 0xe0})
	case r.Method == http.MethodDelete:
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodPut:
		w.WriteHeader(http.StatusOK)
	case path == "/v1/pets" && r.Method == http.MethodPost:
		jsonBody(http.StatusCreated, `{"id": 2, "name": "Rex"}`)
	default:
		jsonBody(http.StatusOK, `[{"id":1,"name":"Rex"}]`)
	}
}

// last returns the last request, with the headers named in want.
func (s *server) last(t *testing.T, headers []string) request {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.reqs) == 0 {
		t.Fatal("the server saw no request")
	}
	r := s.reqs[len(s.reqs)-1]
	got := request{Method: r.Method, URI: r.RequestURI, Cookie: r.Header.Get("Cookie"), Body: s.bodies[len(s.bodies)-1]}
	if len(headers) > 0 {
		got.Header = map[string]string{}
		for _, h := range headers {
			got.Header[h] = r.Header.Get(h)
		}
	}
	return got
}

// loadPetstore loads the 3.0 document with its server variables pointing
// at s.
func loadPetstore(t *testing.T, s *server, opts *openapi.Options) *openapi.ToolSet {
	t.Helper()
	o := openapi.Options{}
	if opts != nil {
		o = *opts
	}
	o.ServerVariables = map[string]string{"scheme": "http", "host": s.Listener.Addr().String()}
	o.Auth = openapi.Auth{BearerToken: bearerSecret, APIKey: apiKeySecret}
	ts, err := openapi.Load(context.Background(), "testdata/petstore-3.0.yaml", &o)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func registry(t *testing.T, ts *openapi.ToolSet) *tools.Registry {
	t.Helper()
	r := tools.NewRegistry()
	for _, tool := range ts.Tools() {
		if err := r.Add(tool); err != nil {
			t.Fatalf("Add: %v", err)
		}
	}
	return r
}

// call validates input as the device does, then runs the tool.
func call(t *testing.T, r *tools.Registry, name, input string) (any, error) {
	t.Helper()
	tool, err := r.Validate(name, json.RawMessage(input))
	if err != nil {
		t.Fatalf("Validate(%s, %s): %v", name, input, err)
	}
	return tool.Invoke(context.Background(), json.RawMessage(input))
}

func TestNamesAndSubTypes(t *testing.T) {
	tests := []struct {
		file string
		want []string // name:sub_type, in Tools order
	}{
		{"testdata/petstore-3.0.yaml", []string{
			"listPets:query",                       // GET /pets
			"createPet:control",                    // POST /pets
			"delete_pets_petId:control",            // no operationId
			"pets_get_by_id:query",                 // operationId "pets.get by id"
			"put_pets_petId:control",               // no operationId
			"get_pets_petId_photos_photoIds:query", // no operationId
			"get_pets_petId_toys:query",            // no operationId
			"slow:query",
			"whoami:query",
		}},
		{"testdata/arm-3.1.yaml", []string{
			"events:query",
			"getJoint:query",
			"logs:query",
			"move:control",
			"createPlan:control",
			"patch_plans_planId:control",
			"search:query",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			ts, err := openapi.Load(context.Background(), tt.file, &openapi.Options{BaseURL: "http://robot.local"})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tool := range ts.Tools() {
				got = append(got, tool.Name+":"+string(tool.SubType))
				if tool.MainType != tools.Remote || tool.Timeout != openapi.DefaultTimeout {
					t.Errorf("%s: main_type %q, timeout %v", tool.Name, tool.MainType, tool.Timeout)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("tools:\n got %q\nwant %q", got, tt.want)
			}
			registry(t, ts) // every tool must be accepted
		})
	}
}

func TestSkipped(t *testing.T) {
	ts, err := openapi.Load(context.Background(), "testdata/petstore-3.0.yaml", &openapi.Options{BaseURL: "http://robot.local"})
	if err != nil {
		t.Fatal(err)
	}
	want := []openapi.Skipped{{
		Name: "uploadPhoto", Method: "PUT", Path: "/pets/{petId}/photo",
		Reason: "the request body must be sent and has no JSON media type (multipart/form-data)",
	}}
	if got := ts.Skipped(); !slices.Equal(got, want) {
		t.Errorf("Skipped() = %+v, want %+v", got, want)
	}
}

func TestDescription(t *testing.T) {
	ts, err := openapi.Load(context.Background(), "testdata/petstore-3.0.yaml", &openapi.Options{
		BaseURL: "http://robot.local",
		Include: []string{"listPets", "get_pets_petId_toys", "delete_pets_petId", "whoami"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"listPets":            "List pets\n\nLists the pets of the store, newest first.",
		"get_pets_petId_toys": "GET /pets/{petId}/toys",
		"delete_pets_petId":   "Removes the pet for good.",
		"whoami":              "Who the server thinks the caller is",
	}
	for _, tool := range ts.Tools() {
		if tool.Description != want[tool.Name] {
			t.Errorf("%s: description %q, want %q", tool.Name, tool.Description, want[tool.Name])
		}
	}
}

// TestParameters shows the input layout on the wire: a property per
// parameter, prefixed by its location when two share a name, the body as
// "body", required carried over.
func TestParameters(t *testing.T) {
	ts, err := openapi.Load(context.Background(), "testdata/petstore-3.0.yaml", &openapi.Options{
		BaseURL: "http://robot.local",
		Include: []string{"get_pets_petId_toys", "put_pets_petId"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"type":"object","properties":{"petId":{"type":"string","description":"The pet's id."},` +
			`"fields":{"type":"string","description":"Fields to return."},` +
			`"body":{"type":"object","properties":{"age":{"type":"integer","maximum":40,"exclusiveMinimum":0},` +
			`"category":{"$ref":"#/$defs/Category"},"name":{"type":"string","examples":["Rex"],"minLength":1,"maxLength":50},` +
			`"owner":{"type":"object","properties":{"address":{"type":"object","properties":{"city":{"type":"string"},` +
			`"street":{"type":"string","description":"Must match the pattern ^(?!PO Box).*$"},"zip":{"type":"string","pattern":"^[0-9]{5}$"}},"required":["city"]},` +
			`"name":{"type":"string"}},"required":["name"]},"tag":{"type":["string","null"]}},"required":["name","owner"]}},` +
			`"$defs":{"Category":{"type":"object","properties":{"children":{"type":"array","items":{"$ref":"#/$defs/Category"}},` +
			`"name":{"type":"string"},"parent":{"$ref":"#/$defs/Category"}},"required":["name"]}},` +
			`"required":["petId"],"additionalProperties":false}`,
		`{"type":"object","properties":{"petId":{"type":"string","description":"The pet's id."},` +
			`"kinds":{"type":"array","items":{"type":"string"}},"colors":{"type":"array","items":{"type":"string"}},` +
			`"filter":{"type":"object","properties":{"color":{"type":"string"},"size":{"type":"integer"}}},` +
			`"query_id":{"type":"integer"},"header_id":{"type":"string"}},"required":["petId"],"additionalProperties":false}`,
	}
	var got []string
	for _, tool := range ts.Tools() {
		b, err := json.Marshal(tool.Parameters)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(b))
	}
	if len(got) != len(want) {
		t.Fatalf("got %d tools, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("parameters of %s:\n got %s\nwant %s", ts.Names()[i], got[i], want[i])
		}
	}
}

func TestValidate(t *testing.T) {
	petstore, err := openapi.Load(context.Background(), "testdata/petstore-3.0.yaml", &openapi.Options{BaseURL: "http://robot.local"})
	if err != nil {
		t.Fatal(err)
	}
	arm, err := openapi.Load(context.Background(), "testdata/arm-3.1.yaml", &openapi.Options{BaseURL: "http://robot.local"})
	if err != nil {
		t.Fatal(err)
	}
	r := registry(t, petstore)
	for _, tool := range arm.Tools() {
		if err := r.Add(tool); err != nil {
			t.Fatal(err)
		}
	}
	const pet = `{"name":"Rex","owner":{"name":"Ann"}}`
	tests := []struct {
		tool, input string
		want        string // "" for valid input, else part of the *ParamsError
	}{
		// 3.0
		{"listPets", `{"X-Request-ID":"r"}`, ""},
		{"listPets", `{}`, `missing required property "X-Request-ID"`},
		{"listPets", `{"X-Request-ID":"r","limit":0}`, `tool_input.limit: 0 is less than the minimum 1`},
		{"listPets", `{"X-Request-ID":"r","status":["lost"]}`, `tool_input.status[0]: "lost" is not one of available, pending, sold`},
		{"listPets", `{"X-Request-ID":"r","Accept":"text/html"}`, `unknown property "Accept"`},
		{"pets_get_by_id", `{}`, `missing required property "petId"`},
		{"pets_get_by_id", `{"petId":"1","fields":"some"}`, `"some" is not one of all, summary`},
		{"createPet", `{}`, `missing required property "body"`},
		{"createPet", `{"body":` + pet + `}`, ""},
		{"createPet", `{"body":{"name":"Rex"}}`, `missing required property "owner"`},
		{"createPet", `{"body":{"name":"Rex","owner":{}}}`, `missing required property "name"`},
		{"createPet", `{"body":{"name":"","owner":{"name":"Ann"}}}`, `tool_input.body.name`},
		{"createPet", `{"body":{"name":"Rex","owner":{"name":"Ann","address":{"zip":"12345"}}}}`, `missing required property "city"`},
		{"createPet", `{"body":{"name":"Rex","owner":{"name":"Ann","address":{"city":"X","zip":"123"}}}}`, `does not match the pattern`},
		{"createPet", `{"body":{"name":"Rex","owner":{"name":"Ann","address":{"city":"X","street":"PO Box 1"}}}}`, ""}, // ECMA pattern dropped
		{"createPet", `{"body":{"name":"Rex","owner":{"name":"Ann"},"tag":null}}`, ""},                                 // nullable
		{"createPet", `{"body":{"name":"Rex","owner":{"name":"Ann"},"tag":5}}`, `tool_input.body.tag`},
		{"createPet", `{"body":{"name":"Rex","owner":{"name":"Ann"},"age":0}}`, `tool_input.body.age`}, // exclusiveMinimum: true
		{"createPet", `{"body":{"name":"Rex","owner":{"name":"Ann"},"age":1}}`, ""},
		{"createPet", `{"body":{"name":"Rex","owner":{"name":"Ann"},"category":{"name":"dogs","children":[{"name":"terriers","parent":{"name":"dogs"}}]}}}`, ""},
		{"createPet", `{"body":{"name":"Rex","owner":{"name":"Ann"},"category":{"name":"dogs","children":[{"parent":{"name":"dogs"}}]}}}`, `missing required property "name"`},
		{"put_pets_petId", `{"petId":"1"}`, ""}, // the body is optional there
		{"get_pets_petId_toys", `{"petId":"1","query_id":3,"header_id":"x"}`, ""},
		{"get_pets_petId_toys", `{"petId":"1","id":3}`, `unknown property "id"`},
		{"get_pets_petId_photos_photoIds", `{"petId":"1","photoIds":[]}`, `tool_input.photoIds`},
		// 3.1
		{"move", `{"body":{"joint":"elbow","angle":90}}`, ""},
		{"move", `{"body":{"joint":"knee","angle":90}}`, `"knee" is not one of base, shoulder, elbow, wrist`},
		{"move", `{"body":{"joint":"elbow","angle":90,"speed":0}}`, `tool_input.body.speed`}, // exclusiveMinimum: 0
		{"move", `{"body":{"joint":"elbow","angle":90,"speed":1}}`, ""},
		{"move", `{"body":{"joint":"elbow","angle":90,"note":null}}`, ""}, // type: [string, "null"]
		{"move", `{"body":{"joint":"elbow","angle":90,"note":7}}`, `tool_input.body.note`},
		{"move", `{"body":{"joint":"elbow","angle":90,"mode":"relative"}}`, `tool_input.body.mode`}, // const
		{"move", `{"body":{"joint":"elbow","angle":90,"mode":"absolute"}}`, ""},
		{"move", `{"body":{"joint":"elbow","angle":90,"extra":1}}`, `unknown property "extra"`},
		{"createPlan", `{"body":{"name":"wave","steps":[{"move":{"joint":"wrist","angle":10},"then":[{"move":{"joint":"wrist","angle":-10}}]}]}}`, ""},
		{"createPlan", `{"body":{"name":"wave","steps":[{"move":{"joint":"wrist","angle":10},"then":[{"move":{"joint":"wrist","angle":-200}}]}]}}`, `angle: -200 is less than the minimum -180`},
		{"patch_plans_planId", `{"planId":1.5}`, `tool_input.planId`},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.input, func(t *testing.T) {
			_, err := r.Validate(tt.tool, json.RawMessage(tt.input))
			var pe *tools.ParamsError
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate: %v", err)
			case tt.want != "" && !errors.As(err, &pe):
				t.Errorf("Validate: %v, want a *ParamsError with %q", err, tt.want)
			case tt.want != "" && !strings.Contains(pe.Details, tt.want):
				t.Errorf("Validate: %q, want %q in it", pe.Details, tt.want)
			}
		})
	}
}

func TestRequests(t *testing.T) {
	s := newServer(t, nil)
	r := registry(t, loadPetstore(t, s, nil))
	tests := []struct {
		tool, input string
		want        request
	}{{
		tool: "listPets",
		input: `{"tags":["a b","c/d","ü"],"status":["available","pending"],"limit":5,` +
			`"X-Request-ID":"4d1d2b3c-0000-4000-8000-000000000001","session":"abc def;x"}`,
		want: request{
			Method: "GET",
			URI:    "/v1/pets?tags=a%20b&tags=c%2Fd&tags=%C3%BC&status=available,pending&limit=5",
			Header: map[string]string{
				"X-Request-ID":  "4d1d2b3c-0000-4000-8000-000000000001",
				"Accept":        "application/json",
				"Authorization": "", // the document's security is the API key alone
				"X-API-Key":     apiKeySecret,
				"Content-Type":  "",
			},
			Cookie: "session=abc%20def%3Bx",
		},
	}, {
		tool:  "listPets",
		input: `{"X-Request-ID":"r","tags":[]}`,
		want:  request{Method: "GET", URI: "/v1/pets"},
	}, {
		tool:  "pets_get_by_id",
		input: `{"petId":"a/b c✓?","fields":"summary"}`,
		want:  request{Method: "GET", URI: "/v1/pets/a%2Fb%20c%E2%9C%93%3F?fields=summary"},
	}, {
		tool:  "createPet",
		input: `{"body": {"name": "Rex", "owner": {"name": "Ann"}, "tag": null}}`,
		want: request{
			Method: "POST", URI: "/v1/pets",
			Header: map[string]string{"Content-Type": "application/json", "Accept": "application/json"},
			Body:   `{"name": "Rex", "owner": {"name": "Ann"}, "tag": null}`,
		},
	}, {
		tool: "get_pets_petId_toys",
		input: `{"petId":"1","kinds":["ball","rope"],"colors":["red","sky blue"],` +
			`"filter":{"size":2,"color":"red"},"query_id":9,"header_id":"h 9"}`,
		want: request{
			Method: "GET",
			URI:    "/v1/pets/1/toys?kinds=ball%20rope&colors=red%7Csky%20blue&filter[color]=red&filter[size]=2&id=9",
			Header: map[string]string{"Id": "h 9"},
		},
	}, {
		tool:  "get_pets_petId_photos_photoIds",
		input: `{"petId":"1","photoIds":["a,b","c d","e"]}`,
		want:  request{Method: "GET", URI: "/v1/pets/1/photos/a%2Cb,c%20d,e"},
	}, {
		tool:  "delete_pets_petId",
		input: `{"petId":"1","fields":"x"}`,
		want:  request{Method: "DELETE", URI: "/v1/pets/1?fields=x", Header: map[string]string{"Content-Type": ""}},
	}, {
		tool:  "put_pets_petId",
		input: `{"petId":"1"}`,
		want:  request{Method: "PUT", URI: "/v1/pets/1", Header: map[string]string{"Content-Type": ""}},
	}}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			if _, err := call(t, r, tt.tool, tt.input); err != nil {
				t.Fatal(err)
			}
			got := s.last(t, slices.Collect(mapKeys(tt.want.Header)))
			if !equalRequest(got, tt.want) {
				t.Errorf("request:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func equalRequest(a, b request) bool {
	if a.Method != b.Method || a.URI != b.URI || a.Cookie != b.Cookie || a.Body != b.Body || len(a.Header) != len(b.Header) {
		return false
	}
	for k, v := range b.Header {
		if a.Header[k] != v {
			return false
		}
	}
	return true
}

func TestResults(t *testing.T) {
	s := newServer(t, nil)
	r := registry(t, loadPetstore(t, s, nil))
	tests := []struct {
		tool, input string
		want        string // the result as JSON
		wantErr     string // or the error
	}{
		{tool: "listPets", input: `{"X-Request-ID":"r"}`, want: `[{"id":1,"name":"Rex"}]`},
		{tool: "createPet", input: `{"body":{"name":"Rex","owner":{"name":"Ann"}}}`, want: `{"id":2,"name":"Rex"}`},
		{tool: "delete_pets_petId", input: `{"petId":"1"}`, want: `{"status":204}`},
		{tool: "put_pets_petId", input: `{"petId":"1"}`, want: `{"status":200}`},
		{tool: "get_pets_petId_toys", input: `{"petId":"1"}`,
			want: `{"status":200,"content_type":"text/plain; charset=utf-8","body":"ball\nrope\n","bytes":10}`},
		{tool: "get_pets_petId_photos_photoIds", input: `{"petId":"1","photoIds":["p"]}`,
			want: `{"status":200,"content_type":"application/octet-stream","bytes":4}`},
		{tool: "pets_get_by_id", input: `{"petId":"7"}`,
			wantErr: `GET /pets/7: 404 Not Found: {"message":"no such pet"}`},
		{tool: "whoami", input: `{}`,
			wantErr: `GET /whoami: 401 Unauthorized: bad credentials auth="Bearer [redacted]" key="" [31m ` + strings.Repeat("é", 72) + "..."},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			res, err := call(t, r, tt.tool, tt.input)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error:\n got %v\nwant %s", err, tt.wantErr)
				}
				if n := len(err.Error()) - len("GET /whoami: 401 Unauthorized: "); tt.tool == "whoami" && n > 200 {
					t.Errorf("excerpt is %d bytes", n)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Errorf("result:\n got %s\nwant %s", b, tt.want)
			}
		})
	}
}

func TestTimeout(t *testing.T) {
	s := newServer(t, nil)
	r := registry(t, loadPetstore(t, s, &openapi.Options{Timeout: 50 * time.Millisecond}))
	start := time.Now()
	_, err := call(t, r, "slow", `{}`)
	if err == nil {
		t.Fatal("no error")
	}
	if want := "GET /slow: no response within 50ms: context deadline exceeded"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v is not context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestNetworkError(t *testing.T) {
	s := newServer(t, nil)
	r := registry(t, loadPetstore(t, s, nil))
	s.Close()
	_, err := call(t, r, "listPets", `{"X-Request-ID":"r"}`)
	if err == nil || !strings.HasPrefix(err.Error(), "GET /pets: ") || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("error %v, want GET /pets: ... connection refused", err)
	}
	if strings.Contains(err.Error(), bearerSecret) || strings.Contains(err.Error(), apiKeySecret) {
		t.Errorf("error %q has a secret", err)
	}
}

// TestLoadURL loads the 3.1 document from a URL: its relative server
// "/api" is resolved against that URL.
func TestLoadURL(t *testing.T) {
	spec, err := os.ReadFile("testdata/arm-3.1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, map[string]string{"/specs/arm.yaml": string(spec)})
	ts, err := openapi.Load(context.Background(), s.URL+"/specs/arm.yaml", &openapi.Options{
		Auth: openapi.Auth{APIKey: apiKeySecret, APIKeyHeader: "X-Device-Key"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := s.URL + "/api"; ts.BaseURL() != want {
		t.Errorf("BaseURL() = %q, want %q", ts.BaseURL(), want)
	}
	r := registry(t, ts)
	tests := []struct {
		tool, input string
		want        request
	}{{
		tool:  "getJoint",
		input: `{"joint":"elbow","units":"rad"}`,
		want:  request{Method: "GET", URI: "/api/joints/elbow?units=rad", Header: map[string]string{"X-Device-Key": apiKeySecret}},
	}, {
		tool:  "move",
		input: `{"body":{"joint":"elbow","angle":-12.5,"speed":0.25}}`,
		want: request{Method: "POST", URI: "/api/moves", Body: `{"joint":"elbow","angle":-12.5,"speed":0.25}`,
			Header: map[string]string{"Content-Type": "application/json"}},
	}, {
		tool:  "patch_plans_planId",
		input: `{"planId":3,"body":{"name":null}}`,
		want: request{Method: "PATCH", URI: "/api/plans/3", Body: `{"name":null}`,
			Header: map[string]string{"Content-Type": "application/merge-patch+json"}},
	}, {
		tool:  "logs",
		input: `{"days":["2024-05-01","2024-05-02"]}`,
		want:  request{Method: "GET", URI: "/api/logs/.2024-05-01,2024-05-02"},
	}, {
		tool:  "events",
		input: `{"filter":{"level":"warn","joint":"elbow"}}`,
		want:  request{Method: "GET", URI: "/api/events/;joint=elbow;level=warn"},
	}, {
		tool:  "search",
		input: `{"where":{"joint": "elbow"}}`,
		want:  request{Method: "GET", URI: "/api/search?where=%7B%22joint%22%3A%22elbow%22%7D"},
	}}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			if _, err := call(t, r, tt.tool, tt.input); err != nil {
				t.Fatal(err)
			}
			got := s.last(t, slices.Collect(mapKeys(tt.want.Header)))
			if !equalRequest(got, tt.want) {
				t.Errorf("request:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	petstore, err := os.ReadFile("testdata/petstore-3.0.yaml")
	if err != nil {
		t.Fatal(err)
	}
	arm, err := os.ReadFile("testdata/arm-3.1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, doc string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	edit := func(doc []byte, old, new string) string {
		if !strings.Contains(string(doc), old) {
			t.Fatalf("test document has no %q", old)
		}
		return strings.Replace(string(doc), old, new, 1)
	}
	base := &openapi.Options{BaseURL: "http://robot.local"}
	tests := []struct {
		name string
		file string
		opts *openapi.Options
		want []string // parts of the error
	}{
		{"no such file", filepath.Join(dir, "missing.yaml"), base, []string{"missing.yaml", "no such file"}},
		{"path parameter not declared", write("undeclared.yaml", edit(petstore, "/pets/{petId}/toys:", "/pets/{petId}/toys/{toyId}:")),
			base, []string{"undeclared.yaml: line ", "GET /pets/{petId}/toys/{toyId} must define exactly all path parameters (missing: [toyId])"}},
		{"bad type", write("type.yaml", edit(petstore, "type: integer\n            minimum: 1", "type: integr\n            minimum: 1")),
			base, []string{"type.yaml: line ", "invalid path /pets: invalid operation GET", `parameter "limit"`, `"integr"`}},
		{"unresolved ref", write("ref.yaml", edit(petstore, `"#/components/schemas/Owner"`, `"#/components/schemas/Ownr"`)),
			base, []string{"ref.yaml", `"Ownr"`}},
		{"external ref to a missing file", write("ext.yaml", edit(petstore, `"#/components/schemas/Owner"`, `"owner.yaml"`)),
			base, []string{"ext.yaml", "owner.yaml"}},
		{"YAML syntax", write("syntax.yaml", edit(petstore, "paths:\n", "paths:\n  - [\n")),
			base, []string{"syntax.yaml", "line"}},
		{"Swagger 2.0", write("swagger.yaml", "swagger: \"2.0\"\ninfo: {title: x, version: \"1\"}\npaths: {}\n"),
			base, []string{"swagger.yaml", "not an OpenAPI 3 document"}},
		{"Include unknown", "testdata/petstore-3.0.yaml", &openapi.Options{BaseURL: "http://x", Include: []string{"listPets", "getPet"}},
			[]string{`petstore-3.0.yaml: Include: no operation is named "getPet" (available: createPet, delete_pets_petId, get_pets_petId_photos_photoIds, get_pets_petId_toys, listPets, pets_get_by_id, put_pets_petId, slow, uploadPhoto, whoami)`}},
		{"Include skipped", "testdata/petstore-3.0.yaml", &openapi.Options{BaseURL: "http://x", Include: []string{"uploadPhoto"}},
			[]string{"PUT /pets/{petId}/photo (uploadPhoto): the request body must be sent and has no JSON media type"}},
		{"SubTypes unknown", "testdata/petstore-3.0.yaml", &openapi.Options{BaseURL: "http://x", SubTypes: map[string]tools.SubType{"list": tools.Query}},
			[]string{`SubTypes: no operation is named "list"`}},
		{"SubTypes invalid", "testdata/petstore-3.0.yaml", &openapi.Options{BaseURL: "http://x", SubTypes: map[string]tools.SubType{"slow": "read"}},
			[]string{`SubTypes: "slow": sub type "read" is not "query" or "control"`}},
		{"unknown server variable", "testdata/petstore-3.0.yaml", &openapi.Options{ServerVariables: map[string]string{"hots": "x"}},
			[]string{`ServerVariables: no server declares a variable "hots" (declared: basePath, host, scheme)`}},
		{"server variable outside its enum", "testdata/petstore-3.0.yaml", &openapi.Options{ServerVariables: map[string]string{"scheme": "ftp"}},
			[]string{`ServerVariables: "scheme" is "ftp", not one of http, https`}},
		{"relative server from a file", "testdata/arm-3.1.yaml", nil,
			[]string{`arm-3.1.yaml: GET /events/{filter} (events): servers: URL "/api" is relative and the document was not loaded from a URL: set base_url to the API's absolute URL`}},
		{"bad BaseURL", "testdata/arm-3.1.yaml", &openapi.Options{BaseURL: "robot.local/api"},
			[]string{`BaseURL "robot.local/api" is not an absolute http or https URL`}},
		{"ambiguous API key header", "testdata/arm-3.1.yaml", &openapi.Options{BaseURL: "http://x", Auth: openapi.Auth{APIKey: apiKeySecret}},
			[]string{`Auth.APIKey is set and the document has 2 apiKey security schemes (deviceKey (header "X-Device-Key"), siteKey (header "X-Site-Key")): set Auth.APIKeyScheme (api_key_scheme)`}},
		{"API key without a scheme", "testdata/pathitems-3.1.yaml", &openapi.Options{Auth: openapi.Auth{APIKey: apiKeySecret}},
			[]string{"the document has no apiKey security scheme to say where it goes: set Auth.APIKeyHeader (api_key_header)"}},
		{"3.1 keyword in 3.0", write("const.yaml", edit(petstore, "        tag:\n          type: string\n", "        tag:\n          const: x\n")),
			base, []string{"const.yaml", "const"}},
		{"3.0 boolean exclusiveMinimum in 3.1", write("excl.yaml", edit(arm, "exclusiveMinimum: 0", "exclusiveMinimum: true\n          minimum: 0")),
			base, []string{"excl.yaml", "exclusiveMinimum"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := openapi.Load(context.Background(), tt.file, tt.opts)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nwant %q in it", err, w)
				}
			}
			if strings.Contains(err.Error(), apiKeySecret) {
				t.Errorf("error %q has the secret", err)
			}
		})
	}
}

func TestOptionsNotModified(t *testing.T) {
	o := &openapi.Options{BaseURL: "http://robot.local", Include: []string{"slow"}}
	ts, err := openapi.Load(context.Background(), "testdata/petstore-3.0.yaml", o)
	if err != nil {
		t.Fatal(err)
	}
	if o.Timeout != 0 || o.HTTPClient != nil || o.Logger != nil {
		t.Errorf("Load filled in the caller's options: %+v", o)
	}
	if got := ts.Names(); !slices.Equal(got, []string{"slow"}) {
		t.Errorf("Names() = %q", got)
	}
}

func TestSubTypeOverride(t *testing.T) {
	ts, err := openapi.Load(context.Background(), "testdata/petstore-3.0.yaml", &openapi.Options{
		BaseURL:  "http://robot.local",
		Include:  []string{"slow", "createPet"},
		SubTypes: map[string]tools.SubType{"createPet": tools.Query, "slow": tools.Control},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range ts.Tools() {
		want := map[string]tools.SubType{"createPet": tools.Query, "slow": tools.Control}[tool.Name]
		if tool.SubType != want {
			t.Errorf("%s: sub_type %q, want %q", tool.Name, tool.SubType, want)
		}
	}
}

// TestAuthHeaderParameter: a header parameter that Auth sets is not the
// model's to fill in.
func TestAuthHeaderParameter(t *testing.T) {
	tests := []struct {
		auth openapi.Auth
		want string
	}{
		{openapi.Auth{}, `{"type":"object","properties":{"X-API-Key":{"type":"string","description":"The key, declared as a parameter as documents often do."}},"required":["X-API-Key"],"additionalProperties":false}`},
		{openapi.Auth{APIKey: apiKeySecret}, `{"type":"object","properties":{},"additionalProperties":false}`},
		{openapi.Auth{APIKey: apiKeySecret, APIKeyHeader: "x-api-key"}, `{"type":"object","properties":{},"additionalProperties":false}`},
		{openapi.Auth{APIKey: apiKeySecret, APIKeyHeader: "X-Other-Key"}, `{"type":"object","properties":{"X-API-Key":{"type":"string","description":"The key, declared as a parameter as documents often do."}},"required":["X-API-Key"],"additionalProperties":false}`},
	}
	for _, tt := range tests {
		ts, err := openapi.Load(context.Background(), "testdata/petstore-3.0.yaml", &openapi.Options{
			BaseURL: "http://robot.local", Include: []string{"slow"}, Auth: tt.auth,
		})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(ts.Tools()[0].Parameters)
		if string(b) != tt.want {
			t.Errorf("with %v:\n got %s\nwant %s", tt.auth, b, tt.want)
		}
	}
}

func TestAuthRedacted(t *testing.T) {
	o := openapi.Options{Auth: openapi.Auth{BearerToken: bearerSecret, APIKey: apiKeySecret}}
	for _, s := range []string{fmt.Sprint(o), fmt.Sprintf("%+v", o), fmt.Sprintf("%#v", o)} {
		if strings.Contains(s, bearerSecret) || strings.Contains(s, apiKeySecret) {
			t.Errorf("formatted options leak a secret: %s", s)
		}
	}
}

func TestExternalRefs(t *testing.T) {
	const api = `openapi: 3.0.3
info: {title: Split, version: "1"}
paths:
  /lights:
    put:
      operationId: setLight
      requestBody:
        required: true
        content:
          application/json:
            schema:
              $ref: "%s"
      responses:
        "204": {description: Set.}
`
	const light = "type: object\nrequired: [on]\nproperties:\n  on: {type: boolean}\n"
	const want = `{"type":"object","properties":{"body":{"type":"object","properties":{"on":{"type":"boolean"}},"required":["on"]}},"required":["body"],"additionalProperties":false}`

	t.Run("file to file", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "light.yaml"), []byte(light), 0o600)
		os.WriteFile(filepath.Join(dir, "api.yaml"), []byte(fmt.Sprintf(api, "light.yaml")), 0o600)
		ts, err := openapi.Load(context.Background(), filepath.Join(dir, "api.yaml"), &openapi.Options{BaseURL: "http://x"})
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(ts.Tools()[0].Parameters); string(b) != want {
			t.Errorf("parameters:\n got %s\nwant %s", b, want)
		}
	})
	t.Run("URL to the same host", func(t *testing.T) {
		s := newServer(t, map[string]string{"/api.yaml": fmt.Sprintf(api, "schemas/light.yaml"), "/schemas/light.yaml": light})
		ts, err := openapi.Load(context.Background(), s.URL+"/api.yaml", &openapi.Options{BaseURL: "http://x"})
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(ts.Tools()[0].Parameters); string(b) != want {
			t.Errorf("parameters:\n got %s\nwant %s", b, want)
		}
	})
	t.Run("URL to another host", func(t *testing.T) {
		other := newServer(t, map[string]string{"/light.yaml": light})
		s := newServer(t, map[string]string{"/api.yaml": fmt.Sprintf(api, other.URL+"/light.yaml")})
		_, err := openapi.Load(context.Background(), s.URL+"/api.yaml", &openapi.Options{BaseURL: "http://x"})
		if err == nil || !strings.Contains(err.Error(), "only URLs on "+s.URL+" may be referred to") {
			t.Errorf("error %v, want a refusal", err)
		}
	})
	t.Run("file to URL", func(t *testing.T) {
		other := newServer(t, map[string]string{"/light.yaml": light})
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "api.yaml"), []byte(fmt.Sprintf(api, other.URL+"/light.yaml")), 0o600)
		_, err := openapi.Load(context.Background(), filepath.Join(dir, "api.yaml"), &openapi.Options{BaseURL: "http://x"})
		if err == nil || !strings.Contains(err.Error(), "a file may only refer to other files") {
			t.Errorf("error %v, want a refusal", err)
		}
	})
}
