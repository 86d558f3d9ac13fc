//go:build devicectl_omit_serve

package main

import "github.com/spf13/cobra"

// mcp goes with serve: it is the stdio form of serve's MCP server, for the laptop or server side.
func newMCPCmd() *cobra.Command { return omittedCmd("mcp", "serve") }
