//go:build devicectl_omit_sim

package main

import "github.com/spf13/cobra"

// completeToolNames is nil: see completion_sim.go.
var completeToolNames cobra.CompletionFunc
