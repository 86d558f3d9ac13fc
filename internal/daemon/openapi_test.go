//go:build openapi

package daemon

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/testing/standin"
)

const thermostatSpec = `openapi: 3.1.0
info: {title: Thermostat, version: 2.0.0}
servers:
  - url: http://thermostat.invalid/api
components:
  securitySchemes:
    token: {type: http, scheme: bearer}
    key: {type: apiKey, in: header, name: X-Key}
  schemas:
    Target:
      type: object
      required: [celsius]
      properties:
        celsius: {type: number, minimum: 5, maximum: 30}
paths:
  /rooms/{room}/temperature:
    get:
      operationId: getTemperature
      summary: Read a room's temperature.
      parameters:
        - {name: room, in: path, required: true, schema: {type: string}}
        - {name: unit, in: query, schema: {type: string, enum: [celsius, fahrenheit]}}
      security: [{key: []}]
  /rooms/{room}/target:
    put:
      operationId: setTarget
      summary: Set a room's target temperature.
      security: [{token: []}]
      parameters:
        - {name: room, in: path, required: true, schema: {type: string}}
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/Target'}
`

// An OpenAPI document's operations become device tools, and their calls real HTTP requests with
// the path, the query and the body where the document puts them, the token or the key as each
// operation's security asks (both are configured), and devicectl's User-Agent as OpenTool calls
// send it.
func TestOpenAPIToolSet(t *testing.T) {
	var mu sync.Mutex
	var got []string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, fmt.Sprintf("%s %s %s [%s] [%s] %s", r.Method, r.URL.RequestURI(), r.Header.Get("User-Agent"), r.Header.Get("Authorization"), r.Header.Get("X-Key"), body))
		mu.Unlock()
		if strings.Contains(r.URL.Path, "attic") {
			http.Error(w, `{"error":"no sensor in the attic"}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"celsius":21.5}`)
	}))
	defer api.Close()
	srv := standin.Start(t, nil)
	spec := standin.WriteFile(t, "thermostat.yaml", thermostatSpec)
	token := standin.WriteFile(t, "thermostat.token", "t0ken-for-the-thermostat\n")
	key := standin.WriteFile(t, "thermostat.key", "k3y-for-the-thermostat\n")
	config := standin.BaseConfig(t, srv.URL()) + fmt.Sprintf(`toolsets:
  openapi:
    - spec: %s
      base_url: %s/api
      bearer_token_file: %s
      api_key_file: %s
      prefix: heat_
`, spec, api.URL, token, key)
	d := startDaemon(t, config, nil)
	dev := standin.NextRegistration(t, srv)
	if names := standin.ToolNames(dev); !slices.Contains(names, "heat_getTemperature") || !slices.Contains(names, "heat_setTarget") {
		t.Fatalf("registered tools = %v, want heat_getTemperature and heat_setTarget", names)
	}

	for _, tc := range []struct{ tool, input, want, request string }{
		{"heat_getTemperature", `{"room":"living room","unit":"celsius"}`, `{"celsius":21.5}`,
			"GET /api/rooms/living%20room/temperature?unit=celsius devicectl/test [] [k3y-for-the-thermostat] "},
		{"heat_setTarget", `{"room":"kitchen","body":{"celsius":19}}`, `{"celsius":21.5}`,
			`PUT /api/rooms/kitchen/target devicectl/test [Bearer t0ken-for-the-thermostat] [] {"celsius":19}`},
		{"heat_getTemperature", `{"room":"attic"}`, `-32000: GET /rooms/attic/temperature: 404 Not Found: {"error":"no sensor in the attic"}`,
			"GET /api/rooms/attic/temperature devicectl/test [] [k3y-for-the-thermostat] "},
		{"heat_setTarget", `{"room":"kitchen","body":{"celsius":40}}`, "-32602", ""},
		{"heat_setTarget", `{"room":"kitchen"}`, "-32602", ""},
	} {
		mu.Lock()
		got = nil
		mu.Unlock()
		resp := standin.Execute(t, dev, tc.tool, tc.input)
		answer := resultOrError(resp)
		if resp.Error != nil {
			answer = fmt.Sprintf("%d: %s", resp.Error.Code, resp.Error.Message)
		}
		if !strings.HasPrefix(answer, tc.want) {
			t.Errorf("%s %s = %s, want %s", tc.tool, tc.input, answer, tc.want)
		}
		mu.Lock()
		var want []string
		if tc.request != "" {
			want = []string{tc.request}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s %s: the API got %q, want %q", tc.tool, tc.input, got, want)
		}
		mu.Unlock()
	}
	if strings.Contains(d.stderr.String(), "t0ken-for-the-thermostat") || strings.Contains(d.stderr.String(), "k3y-for-the-thermostat") {
		t.Error("the log holds the API's token or key")
	}
}

// A broken document is a config error naming the tool set, and refuses the start.
func TestOpenAPIBadSpec(t *testing.T) {
	spec := standin.WriteFile(t, "broken.yaml", "openapi: 3.0.3\ninfo: {title: x}\npaths: {}\n")
	c := simConfig(t, "ws://127.0.0.1:1/", "AA-BB-CC-DD-EE-FF")
	c.ToolSets.OpenAPI = []config.OpenAPISetConfig{config.DefaultOpenAPISet()}
	c.ToolSets.OpenAPI[0].Spec = spec
	err := refusedStart(t, c)
	if err == nil || !strings.Contains(err.Error(), "toolsets.openapi[1].spec: ") || !strings.Contains(err.Error(), "broken.yaml") {
		t.Errorf("Run = %v, want an error naming toolsets.openapi[1].spec and the file", err)
	}
}

// A document whose server is relative, read from a file, needs base_url: the error says so by
// the config key's name, not the Go option's.
func TestOpenAPIRelativeServer(t *testing.T) {
	spec := standin.WriteFile(t, "relative.yaml", strings.Replace(thermostatSpec, "http://thermostat.invalid/api", "/api", 1))
	c := simConfig(t, "ws://127.0.0.1:1/", "AA-BB-CC-DD-EE-FF")
	c.ToolSets.OpenAPI = []config.OpenAPISetConfig{config.DefaultOpenAPISet()}
	c.ToolSets.OpenAPI[0].Spec = spec
	err := refusedStart(t, c)
	if err == nil || !strings.Contains(err.Error(), "toolsets.openapi[1]") || !strings.Contains(err.Error(), `URL "/api" is relative`) ||
		!strings.Contains(err.Error(), "set base_url") || strings.Contains(err.Error(), "Options.BaseURL") {
		t.Errorf("Run = %v, want an error naming toolsets.openapi[1] and base_url", err)
	}
}
