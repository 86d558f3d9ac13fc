// Package mcpinspector runs the MCP Inspector's command-line mode (npm
// @modelcontextprotocol/inspector, pinned at Version in agent/mcpserver/testdata/inspector, which
// scripts/mcp-inspector.sh installs) for the tests that drive devicectl's MCP server with a
// client that is not its own: serve's /mcp over HTTP (agent/mcpserver) and the devicectl mcp
// command as a host launches it (cmd/devicectl).
//
// The tests opt in with DEVICECTL_MCP_INSPECTOR=1 and skip without it; with it set, a missing npx
// or Inspector, or another version of it, fails them, so a machine that lost the install cannot
// turn them into silent skips.
package mcpinspector
