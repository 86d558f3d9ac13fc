//go:build !devicectl_omit_mcpsets

package config

import "time"

// mcpSetsKey is toolsets.mcp with its item keys, in builds that have MCP tool sets.
func mcpSetsKey() setting {
	return itemsKey("toolsets.mcp", "MCP servers whose tools the device declares as its own tools; calls are forwarded as tools/call (not in board builds)", func(c *Config) *[]MCPSetConfig { return &c.ToolSets.MCP }, DefaultMCPSet, checkMCPSet, []itemKey[*MCPSetConfig]{
		itemString("name", "names the set in logs, and makes the default prefix (required; letters, digits, _ and -)", func(s *MCPSetConfig) *string { return &s.Name }, checkToolSetName),
		itemList("command", "a stdio server: its argv, run without a shell in a process group of its own, restarted when it dies", func(s *MCPSetConfig) *[]string { return &s.Command }),
		itemMap("env", "variables added to a stdio server's environment, which otherwise holds only PATH, HOME, USER, LANG and the like of devicectl's", func(s *MCPSetConfig) *map[string]string { return &s.Env }, nil),
		itemString("url", "a Streamable HTTP server instead, e.g. http://127.0.0.1:3001/mcp", func(s *MCPSetConfig) *string { return &s.URL }, checkHTTPURL),
		itemString("token_file", "file holding a token sent to url as Authorization: Bearer", func(s *MCPSetConfig) *string { return &s.TokenFile }, nil),
		itemList("tools", "the tools to declare, by the server's names; empty: all", func(s *MCPSetConfig) *[]string { return &s.Tools }),
		itemMap("sub_types", "sub_type per tool (the server's name); else query (the server waits for the result)", func(s *MCPSetConfig) *map[string]string { return &s.SubTypes }, checkSubType),
		itemString("prefix", "put before each tool's name; empty: the name and _", func(s *MCPSetConfig) *string { return &s.Prefix }, checkToolSetName),
		itemDuration("timeout", "one forwarded call", func(s *MCPSetConfig) *time.Duration { return &s.Timeout }),
		itemDuration("init_timeout", "starting the server, initialize and the first tools/list; past it the set is left out and retried", func(s *MCPSetConfig) *time.Duration { return &s.InitTimeout }),
	})
}
