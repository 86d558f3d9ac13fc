// Package mcpclient opens MCP sessions for tests with the go-sdk's own client, over Streamable
// HTTP, to an MCP server such as serve's /mcp, and waits on what the server lists: a session
// notices every notifications/tools/list_changed, so a test waits for a tool to be listed rather
// than for a clock.
package mcpclient
