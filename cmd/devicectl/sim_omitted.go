//go:build devicectl_omit_sim

package main

import "github.com/spf13/cobra"

// call drives the device through the same in-process stand-in server as sim: both go.
func newSimCmd() *cobra.Command  { return omittedCmd("sim", "sim") }
func newCallCmd() *cobra.Command { return omittedCmd("call", "sim") }
