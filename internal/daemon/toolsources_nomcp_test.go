//go:build devicectl_omit_mcpsets

package daemon

import (
	"strings"
	"testing"

	"github.com/devicectl/devicectl/internal/config"
)

// Without the mcp build tag, an MCP tool set is refused with how to get one.
func TestMCPNotBuiltIn(t *testing.T) {
	c := simConfig(t, "ws://127.0.0.1:1/", "AA-BB-CC-DD-EE-FF")
	c.ToolSets.MCP = []config.MCPSetConfig{config.DefaultMCPSet()}
	c.ToolSets.MCP[0].Name = "everything"
	c.ToolSets.MCP[0].Command = []string{"mcp-server-everything"}
	err := refusedStart(t, c)
	if err == nil || !strings.Contains(err.Error(), "toolsets.mcp[1]: this devicectl is built without MCP tool sets (the devicectl_omit_mcpsets tag") {
		t.Errorf("Run = %v, want the build tag named", err)
	}
}
