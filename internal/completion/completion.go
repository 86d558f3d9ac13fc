package completion

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/devicectl/devicectl/internal/config"
)

// Shells are the shells cobra writes completion scripts for.
var Shells = []string{"bash", "zsh", "fish", "powershell"}

// SetUp makes shell completion offer values where a command line has a fixed set:
// the choices of every config flag that has them (--log-level, --log-format, --hardware,
// --language, ...) and the device's tools after call. And `completion SHELL` for a shell cobra
// does not know is an error (exit 2), not its help.
//
// toolNames completes call's TOOL argument; nil offers nothing. usage wraps an error the command
// line is at fault for (the command then exits 2).
func SetUp(root *cobra.Command, toolNames cobra.CompletionFunc, usage func(error) error) {
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
			cmd.ValidArgsFunction = toolNames
		case "completion":
			cmd.Args = func(cmd *cobra.Command, args []string) error {
				if len(args) > 0 {
					return usage(fmt.Errorf("unsupported shell %q: %s writes scripts for %s", args[0], cmd.CommandPath(), strings.Join(Shells, ", ")))
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

// FirstSentence is what a completion menu has room for: a description up to its first full stop.
func FirstSentence(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if i := strings.Index(s, "。"); i >= 0 {
		return s[:i+len("。")]
	}
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}
