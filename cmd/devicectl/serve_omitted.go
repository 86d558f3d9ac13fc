//go:build devicectl_omit_serve

package main

import "github.com/spf13/cobra"

func newServeCmd() *cobra.Command { return omittedCmd("serve", "serve") }
