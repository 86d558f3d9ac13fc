//go:build !devicectl_omit_mcpsets

package config

import (
	"reflect"
	"testing"
	"time"
)

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
func TestMCPSetErrors(t *testing.T) {
	checkParseErrors(t, []parseError{
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
	})
}
