package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/devicectl/devicectl/internal/config"
	devhw "github.com/devicectl/devicectl/internal/hardware"
)

// completionShells are the shells cobra writes completion scripts for.
var completionShells = []string{"bash", "zsh", "fish", "powershell"}

// setUpCompletion makes shell completion offer values where a command line has a fixed set:
// the choices of every config flag that has them (--log-level, --log-format, --hardware,
// --language, ...) and the device's tools after call. And `completion SHELL` for a shell cobra
// does not know is an error (exit 2), not its help.
func setUpCompletion(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if choices := config.FlagChoices(f.Name); choices != nil {
				// Registering twice is an error: a flag inherited from a parent is the parent's.
				if _, ok := cmd.GetFlagCompletionFunc(f.Name); !ok {
					cmd.RegisterFlagCompletionFunc(f.Name, cobra.FixedCompletions(choices, cobra.ShellCompDirectiveNoFileComp))
				}
			}
		})
		switch cmd.Name() {
		case "call":
			cmd.ValidArgsFunction = completeToolNames
		case "completion":
			cmd.Args = func(cmd *cobra.Command, args []string) error {
				if len(args) > 0 {
					return usageError{fmt.Errorf("unsupported shell %q: %s writes scripts for %s", args[0], cmd.CommandPath(), strings.Join(completionShells, ", "))}
				}
				return nil
			}
			// Runnable, so that Args is checked: cobra shows the help of a command with no Run
			// whatever its arguments, and exits 0.
			cmd.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// completeToolNames offers the tools call can run, the simulated device's, each with the first
// line of its description in the --language given.
func completeToolNames(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
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
		out = append(out, cobra.CompletionWithDesc(d.Name, firstSentence(d.Description)))
	}
	if len(out) == 0 {
		return nil, cobra.ShellCompDirectiveError
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// firstSentence is what a completion menu has room for: a description up to its first full stop.
func firstSentence(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if i := strings.Index(s, "。"); i >= 0 {
		return s[:i+len("。")]
	}
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}
