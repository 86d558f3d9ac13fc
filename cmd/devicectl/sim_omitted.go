//go:build devicectl_omit_sim

package main

import "github.com/spf13/cobra"

func newSimCmd() *cobra.Command { return omittedCmd("sim", "sim") }
