//go:build devicectl_omit_mcpsets

package config

import "testing"

func TestMCPSetsLeftOut(t *testing.T) {
	checkLeftOut(t, "toolsets.mcp", func(c *Config) int { return len(c.ToolSets.MCP) })
}
