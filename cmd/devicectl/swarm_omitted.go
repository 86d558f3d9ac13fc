//go:build devicectl_omit_swarm

package main

import "github.com/spf13/cobra"

func newSwarmCmd() *cobra.Command { return omittedCmd("swarm", "swarm") }
