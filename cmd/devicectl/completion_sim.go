//go:build !devicectl_omit_sim

package main

// The tools offered after call are the simulated device's: a guess on a board, whose tools come
// from its config and parts, and 600 bytes the armv6 binary has no room for. Board builds (no
// sim) complete no tool names.

import (
	"github.com/spf13/cobra"

	"github.com/devicectl/devicectl/internal/completion"
	"github.com/devicectl/devicectl/internal/config"
	devhw "github.com/devicectl/devicectl/internal/hardware"
)

var completeToolNames = completeSimToolNames

// completeSimToolNames offers the tools call can run, the simulated device's, each with the first
// line of its description in the --language given.
func completeSimToolNames(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp // JSON: nothing to offer
	}
	c := config.Defaults()
	if err := config.ApplyFlags(cmd.Flags(), c); err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	reg, err := devhw.NewRegistry(devhw.Sim(nil), c, buildVersion(), nil)
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var out []cobra.Completion
	for _, d := range reg.Declarations() {
		out = append(out, cobra.CompletionWithDesc(d.Name, completion.FirstSentence(d.Description)))
	}
	if len(out) == 0 {
		return nil, cobra.ShellCompDirectiveError
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
