package config

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseToolSets(t *testing.T) {
	doc := `
opentool:
  listen: 127.0.0.1:9627
toolsets:
  opentool:
    - url: http://192.168.1.20:9627
      api_key_file: /etc/devicectl/lights.key
      functions: [turn_on, turn_off]
      sub_types: {turn_on: control}
      prefix: lights_
      drop_after: 1m
    - url: http://127.0.0.1:9628
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
	lights := DefaultOpenToolSet()
	lights.URL = "http://192.168.1.20:9627"
	lights.APIKeyFile = "/etc/devicectl/lights.key"
	lights.Functions = []string{"turn_on", "turn_off"}
	lights.SubTypes = map[string]string{"turn_on": "control"}
	lights.Prefix = "lights_"
	lights.DropAfter = time.Minute
	second := DefaultOpenToolSet()
	second.URL = "http://127.0.0.1:9628"
	weather := DefaultOpenAPISet()
	weather.Spec = "/etc/devicectl/weather.yaml"
	weather.BaseURL = "https://api.example.com/v1"
	weather.ServerVariables = map[string]string{"region": "eu"}
	weather.Operations = []string{"getForecast"}
	weather.BearerTokenFile = "/etc/devicectl/weather.token"
	weather.APIKeyFile = "/etc/devicectl/weather.key" // with the token: the Petstore needs both
	weather.APIKeyScheme = "api_key"
	weather.Timeout = 3 * time.Second
	want := ToolSetsConfig{OpenTool: []OpenToolSetConfig{lights, second}, OpenAPI: []OpenAPISetConfig{weather}}
	if !reflect.DeepEqual(c.ToolSets, want) {
		t.Errorf("toolsets =\n%+v\nwant\n%+v", c.ToolSets, want)
	}
	if c.OpenTool.Listen != "127.0.0.1:9627" {
		t.Errorf("opentool.listen = %q", c.OpenTool.Listen)
	}
}

func TestParseMCPSets(t *testing.T) {
	doc := `
toolsets:
  mcp:
    - name: everything
      command: [npx, -y, "@modelcontextprotocol/server-everything", stdio]
      env: {DEBUG: "1"}
      tools: [echo]
      sub_types: {echo: control}
    - name: remote
      url: http://127.0.0.1:3001/mcp
      token_file: /etc/devicectl/mcp.token
      prefix: r_
      timeout: 5s
      init_timeout: 2s
`
	c := Defaults()
	if err := Parse([]byte(doc), c); err != nil {
		t.Fatal(err)
	}
	every := DefaultMCPSet()
	every.Name = "everything"
	every.Command = []string{"npx", "-y", "@modelcontextprotocol/server-everything", "stdio"}
	every.Env = map[string]string{"DEBUG": "1"}
	every.Tools = []string{"echo"}
	every.SubTypes = map[string]string{"echo": "control"}
	every.Prefix = "everything_" // the default: the name and _
	remote := DefaultMCPSet()
	remote.Name = "remote"
	remote.URL = "http://127.0.0.1:3001/mcp"
	remote.TokenFile = "/etc/devicectl/mcp.token"
	remote.Prefix = "r_"
	remote.Timeout = 5 * time.Second
	remote.InitTimeout = 2 * time.Second
	if want := []MCPSetConfig{every, remote}; !reflect.DeepEqual(c.ToolSets.MCP, want) {
		t.Errorf("toolsets.mcp =\n%+v\nwant\n%+v", c.ToolSets.MCP, want)
	}
}

// Each mistake is named by its key, down to the item and the line.
func TestToolSetErrors(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"toolsets:\n  opentool:\n    - api_key_file: k\n", "toolsets.opentool[1].url: missing"},
		{"toolsets:\n  opentool:\n    - url: ftp://x\n", `toolsets.opentool[1].url: "ftp://x" is not an http:// or https:// URL (line 3)`},
		{"toolsets:\n  opentool:\n    - url: http://x\n      sub_type: maybe\n", `toolsets.opentool[1].sub_type: "maybe" is not query or control (line 4)`},
		{"toolsets:\n  opentool:\n    - url: http://x\n      sub_types: {a: fast}\n", `toolsets.opentool[1].sub_types.a: "fast" is not query or control`},
		{"toolsets:\n  opentool:\n    - url: http://x\n    - url: http://y\n      colour: red\n", "toolsets.opentool[2].colour: unknown key (the keys are url, api_key_file,"},
		{"toolsets:\n  opentool:\n    - url: http://x\n      url: http://y\n", "toolsets.opentool[1].url: duplicate key (first at line 3)"},
		{"toolsets:\n  opentool:\n    - url: http://x\n      functions: a\n", "toolsets.opentool[1].functions: want a list"},
		{"toolsets:\n  opentool:\n    url: http://x\n", "toolsets.opentool: want a list of mappings"},
		{"toolsets:\n  opentool:\n    - http://x\n", "toolsets.opentool[1]: want a mapping"},
		{"toolsets:\n  opentool:\n    - url: http://x\n      timeout: soon\n", `toolsets.opentool[1].timeout: "soon" is not a duration`},
		{"toolsets:\n  openapi:\n    - base_url: http://x\n", "toolsets.openapi[1].spec: missing"},
		{"toolsets:\n  openapi:\n    - spec: a.yaml\n      api_key_scheme: key\n", "toolsets.openapi[1].api_key_scheme: set without api_key_file"},
		{"toolsets:\n  openapi:\n    - spec: a.yaml\n      api_key_file: k\n      api_key_scheme: key\n      api_key_header: X-Key\n", "toolsets.openapi[1].api_key_header: set with api_key_scheme"},
		{"toolsets:\n  openapi:\n    - spec: a.yaml\n      api_key_header: X-Key\n", "toolsets.openapi[1].api_key_header: set without api_key_file"},
		{"toolsets:\n  grpc: []\n", "toolsets.grpc: unknown key"},
		{"toolsets:\n  mcp:\n    - command: [x]\n", "toolsets.mcp[1].name: missing"},
		{"toolsets:\n  mcp:\n    - name: a\n      command: [x]\n    - name: b\n", "toolsets.mcp[2].command: missing: set command (a stdio server's argv) or url"},
		{"toolsets:\n  mcp:\n    - name: a\n      command: [x]\n      url: http://x/mcp\n", "toolsets.mcp[1].url: set command or url, not both"},
		{"toolsets:\n  mcp:\n    - name: a\n      command: [x]\n      token_file: t\n", "toolsets.mcp[1].token_file: set without url"},
		{"toolsets:\n  mcp:\n    - name: a\n      command: x\n", "toolsets.mcp[1].command: want a list"},
		{"toolsets:\n  mcp:\n    - name: a\n      url: http://x/mcp\n      env: {A: b}\n", "toolsets.mcp[1].env: set with url"},
		{"toolsets:\n  mcp:\n    - name: a\n      command: [x, \"\"]\n", "toolsets.mcp[1].command: item 2 is empty"},
		{"toolsets:\n  mcp:\n    - name: my set\n      command: [x]\n", `toolsets.mcp[1].name: "my set": use letters, digits, _ and -`},
		{"toolsets:\n  mcp:\n    - name: a\n      prefix: a.\n      command: [x]\n", `toolsets.mcp[1].prefix: "a.": use letters`},
		{"toolsets:\n  mcp:\n    - name: a\n      url: stdio:x\n", `toolsets.mcp[1].url: "stdio:x" is not an http:// or https:// URL`},
		{"toolsets:\n  mcp:\n    - name: a\n      command: [x]\n      init_timeout: 0s\n", `toolsets.mcp[1].init_timeout: "0s" must be positive`},
		{"opentool:\n  listen: 9627\n", `opentool.listen: "9627" is not host:port`},
	} {
		c := Defaults()
		err := Parse([]byte(tc.doc), c)
		if err == nil {
			err = c.Check()
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error = %v, want one containing %q", tc.doc, err, tc.want)
		}
	}
}

// The device's tools drive its hardware: serving them beyond this machine needs keys.
func TestOpenToolListenBeyondLoopbackNeedsKeys(t *testing.T) {
	for _, tc := range []struct {
		listen, keys string
		ok           bool
	}{
		{"127.0.0.1:9627", "", true},
		{"[::1]:9627", "", true},
		{"localhost:9627", "", true},
		{"0.0.0.0:9627", "", false},
		{":9627", "", false},
		{"192.168.1.5:9627", "", false},
		{"device.lan:9627", "", false},
		{"0.0.0.0:9627", "/etc/devicectl/opentool.keys", true},
	} {
		c := Defaults()
		c.OpenTool.Listen, c.OpenTool.APIKeysFile = tc.listen, tc.keys
		err := c.Check()
		if (err == nil) != tc.ok {
			t.Errorf("listen %q keys %q: check = %v, want ok=%v", tc.listen, tc.keys, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "opentool.listen: "+tc.listen+" is reachable beyond this machine") {
			t.Errorf("listen %q: error %q does not say why", tc.listen, err)
		}
	}
}

// The opentool section's keys that only make sense together.
func TestOpenToolServerCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(c *Config)
		want string // "" for no error
	}{
		{"defaults", func(c *Config) {}, ""},
		{"TLS", func(c *Config) { c.OpenTool.CertFile, c.OpenTool.KeyFile = "c.pem", "k.pem" }, ""},
		{"cert without key", func(c *Config) { c.OpenTool.CertFile = "c.pem" }, "opentool.key_file: missing: opentool.cert_file and opentool.key_file go together"},
		{"key without cert", func(c *Config) { c.OpenTool.KeyFile = "k.pem" }, "opentool.cert_file: missing"},
		{"write timeout under the tool timeout", func(c *Config) { c.OpenTool.WriteTimeout = 5 * time.Second }, "opentool.write_timeout: 5s is not longer than execution.tool_timeout (10s)"},
		{"write timeout under a tool's", func(c *Config) { c.Execution.ToolTimeouts = map[string]time.Duration{"speak": 3 * time.Minute} }, "opentool.write_timeout: 2m0s is not longer than execution.tool_timeouts.speak (3m0s)"},
		{"write timeout under a tool set's", func(c *Config) {
			s := DefaultOpenAPISet()
			s.Spec, s.Timeout = "w.yaml", 5*time.Minute
			c.ToolSets.OpenAPI = []OpenAPISetConfig{s}
		}, "toolsets.openapi[1].timeout (5m0s)"},
		{"write timeout under an MCP set's", func(c *Config) {
			s := DefaultMCPSet()
			s.Name, s.Command, s.Timeout = "slow", []string{"slow-server"}, 3*time.Minute
			c.ToolSets.MCP = []MCPSetConfig{s}
		}, "opentool.write_timeout: 2m0s is not longer than toolsets.mcp[1].timeout (3m0s)"},
		{"host names", func(c *Config) {
			c.OpenTool.AllowedHosts = []string{"board.lan", "board.lan:8443", "192.168.1.5", "[fe80::1]:9627"}
		}, ""},
		{"a URL as host", func(c *Config) { c.OpenTool.AllowedHosts = []string{"https://board.lan"} }, `opentool.allowed_hosts: "https://board.lan" is not a host or host:port`},
		{"a bad port", func(c *Config) { c.OpenTool.AllowedHosts = []string{"board.lan:http"} }, `port "http" is not a number`},
	} {
		c := Defaults()
		c.OpenTool.Listen = "127.0.0.1:9627"
		tc.edit(c)
		err := c.Check()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: Check() = %v, want %q", tc.name, err, tc.want)
		}
	}
}

// The longest tool timeout is the slowest tool's, tool sets included, named by its key; among
// equals, the first in key order.
func TestLongestToolTimeout(t *testing.T) {
	c := Defaults()
	c.Execution.ToolTimeout = 5 * time.Second
	c.Execution.ToolTimeouts = map[string]time.Duration{"b": 6 * time.Second, "a": 6 * time.Second, "c": time.Second}
	check := func(want time.Duration, wantKey string) {
		t.Helper()
		if got, key := c.LongestToolTimeout(); got != want || key != wantKey {
			t.Errorf("LongestToolTimeout = %s (%s), want %s (%s)", got, key, want, wantKey)
		}
	}
	check(6*time.Second, "execution.tool_timeouts.a")
	c.ToolSets.OpenTool = []OpenToolSetConfig{{Timeout: 7 * time.Second}}
	c.ToolSets.OpenAPI = []OpenAPISetConfig{{Timeout: time.Second}, {Timeout: 9 * time.Second}}
	check(9*time.Second, "toolsets.openapi[2].timeout")
	c.ToolSets.MCP = []MCPSetConfig{{Timeout: 40 * time.Second}}
	check(40*time.Second, "toolsets.mcp[1].timeout")
}
