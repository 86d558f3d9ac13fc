//go:build openapi || !devicectl_omit_serve

package config

import (
	"reflect"
	"testing"
	"time"
)

func TestParseOpenAPISets(t *testing.T) {
	doc := `
toolsets:
  openapi:
    - spec: /etc/devicectl/weather.yaml
      base_url: https://api.example.com/v1
      server_variables: {region: eu}
      operations: [getForecast]
      bearer_token_file: /etc/devicectl/weather.token
      api_key_file: /etc/devicectl/weather.key
      api_key_scheme: api_key
      timeout: 3s
`
	c := Defaults()
	if err := Parse([]byte(doc), c); err != nil {
		t.Fatal(err)
	}
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
	weather := DefaultOpenAPISet()
	weather.Spec = "/etc/devicectl/weather.yaml"
	weather.BaseURL = "https://api.example.com/v1"
	weather.ServerVariables = map[string]string{"region": "eu"}
	weather.Operations = []string{"getForecast"}
	weather.BearerTokenFile = "/etc/devicectl/weather.token"
	weather.APIKeyFile = "/etc/devicectl/weather.key" // with the token: the Petstore needs both
	weather.APIKeyScheme = "api_key"
	weather.Timeout = 3 * time.Second
	if want := []OpenAPISetConfig{weather}; !reflect.DeepEqual(c.ToolSets.OpenAPI, want) {
		t.Errorf("toolsets.openapi =\n%+v\nwant\n%+v", c.ToolSets.OpenAPI, want)
	}
}

// Each mistake is named by its key, down to the item and the line.
func TestOpenAPISetErrors(t *testing.T) {
	checkParseErrors(t, []parseError{
		{"toolsets:\n  openapi:\n    - base_url: http://x\n", "toolsets.openapi[1].spec: missing"},
		{"toolsets:\n  openapi:\n    - spec: a.yaml\n      api_key_scheme: key\n", "toolsets.openapi[1].api_key_scheme: set without api_key_file"},
		{"toolsets:\n  openapi:\n    - spec: a.yaml\n      api_key_file: k\n      api_key_scheme: key\n      api_key_header: X-Key\n", "toolsets.openapi[1].api_key_header: set with api_key_scheme"},
		{"toolsets:\n  openapi:\n    - spec: a.yaml\n      api_key_header: X-Key\n", "toolsets.openapi[1].api_key_header: set without api_key_file"},
	})
}
