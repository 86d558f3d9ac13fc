package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/devicectl/devicectl/internal/buildfeatures"
)

// omittedCmd stands in for a command whose feature this build leaves out (the board binaries of
// make cross; see internal/buildfeatures): it keeps the name, so the command says why it is
// missing instead of "unknown command", and exits 2 whatever its arguments.
func omittedCmd(name, feature string) *cobra.Command {
	f, _ := buildfeatures.Lookup(feature)
	return &cobra.Command{
		Use:                name,
		Short:              "Left out of this build (" + f.Tag + "): make build includes it",
		DisableFlagParsing: true, // its flags are gone too: say why, not "unknown flag"
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageError{fmt.Errorf("%s is left out of this build (the %s build tag, as make cross builds the board binaries); make build includes it",
				cmd.CommandPath(), f.Tag)}
		},
	}
}
