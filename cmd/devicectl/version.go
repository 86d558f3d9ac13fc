package main

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/spf13/cobra"

	"github.com/devicectl/devicectl/internal/buildfeatures"
)

// Set by the Makefile: go build -ldflags "-X main.version=v1.2.3 -X main.commit=abc1234".
var (
	version string
	commit  string
)

// buildStamp is the version and commit of this binary (see buildfeatures.Stamp).
var buildStamp = sync.OnceValues(func() (string, string) { return buildfeatures.Stamp(version, commit) })

// buildVersion is the version sent in User-Agent and reported by get_device_status.
func buildVersion() string {
	v, _ := buildStamp()
	return v
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, Go version, platform and the features left out",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, c := buildStamp()
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "devicectl %s\ncommit:   %s\ngo:       %s\nplatform: %s/%s\n%s",
				v, c, runtime.Version(), runtime.GOOS, runtime.GOARCH, buildfeatures.OmittedLine())
			return err
		},
	}
}
