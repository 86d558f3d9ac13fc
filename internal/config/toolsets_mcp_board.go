//go:build devicectl_omit_mcpsets

package config

// mcpSetsKey is toolsets.mcp in a build without MCP tool sets.
func mcpSetsKey() setting {
	return leftOutSetsKey("toolsets.mcp", "MCP servers as tool sets (not in this build)", func(c *Config) *[]MCPSetConfig { return &c.ToolSets.MCP })
}
