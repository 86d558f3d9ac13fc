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
	want := ToolSetsConfig{OpenTool: []OpenToolSetConfig{lights, second}}
	if !reflect.DeepEqual(c.ToolSets, want) {
		t.Errorf("toolsets =\n%+v\nwant\n%+v", c.ToolSets, want)
	}
	if c.OpenTool.Listen != "127.0.0.1:9627" {
		t.Errorf("opentool.listen = %q", c.OpenTool.Listen)
	}
}

// Each mistake is named by its key, down to the item and the line.
func TestToolSetErrors(t *testing.T) {
	checkParseErrors(t, []parseError{
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
		{"toolsets:\n  grpc: []\n", "toolsets.grpc: unknown key"},
		{"opentool:\n  listen: 9627\n", `opentool.listen: "9627" is not host:port`},
	})
}

// A parseError is a config file that Parse or Check must refuse with an error containing want.
type parseError struct{ doc, want string }

func checkParseErrors(t *testing.T, cases []parseError) {
	t.Helper()
	for _, tc := range cases {
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

// Every entry of a tool-set list is kept, in every build: the daemon loads each, or refuses it by
// its key where the build leaves its kind out (toolsets_*_board_test.go). An empty list is no tool
// sets, the same as no key at all, so that a reload adding one sees nothing changed.
func TestToolSetEntriesKept(t *testing.T) {
	doc := `
toolsets:
  opentool:
    - url: http://192.168.1.20:9627
  openapi:
    - spec: a.yaml
    - spec: b.yaml
  mcp:
    - {name: a, command: [a-server]}
    - {name: b, url: "http://127.0.0.1:3001/mcp"}
    - {name: c, command: [c-server]}
`
	c := Defaults()
	if err := Parse([]byte(doc), c); err != nil {
		t.Fatal(err)
	}
	if n := [3]int{len(c.ToolSets.OpenTool), len(c.ToolSets.OpenAPI), len(c.ToolSets.MCP)}; n != [3]int{1, 2, 3} {
		t.Errorf("opentool, openapi, mcp: %v entries, want [1 2 3]", n)
	}
	for _, doc := range []string{
		"toolsets:\n  opentool: []\n  openapi: []\n  mcp: []\n",
		"toolsets:\n  opentool:\n  openapi:\n  mcp:\n",
	} {
		c := Defaults()
		if err := Parse([]byte(doc), c); err != nil {
			t.Errorf("%q: %v", doc, err)
		} else if !reflect.DeepEqual(c.ToolSets, Defaults().ToolSets) {
			t.Errorf("%q: toolsets = %#v, want %#v", doc, c.ToolSets, Defaults().ToolSets)
		}
	}
}

// checkLeftOut checks a build that leaves out key's kind of tool set: its entries are counted
// whatever they hold, for the daemon to refuse each by its key and say the build leaves it out.
// Dropping one would start the device without tools its config asks for.
func checkLeftOut(t *testing.T, key string, entries func(*Config) int) {
	t.Helper()
	for _, k := range Keys(Defaults()) {
		if k.Name == key && (len(k.Items) > 0 || !strings.Contains(k.Usage, "not in this build")) {
			t.Errorf("%s in this build: %d item keys, usage %q; want none, and that it is not in this build", key, len(k.Items), k.Usage)
		}
	}
	doc, _ := yamlFor(key, "[{name: a, command: [x]}, {spec: a.yaml, colour: red}, 5]")
	c := Defaults()
	if err := Parse([]byte(doc), c); err != nil {
		t.Fatalf("%q: %v", doc, err)
	}
	if n := entries(c); n != 3 {
		t.Errorf("%q: %d entries, want 3", doc, n)
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
