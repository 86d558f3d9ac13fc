package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/spf13/cobra"
)

// Set by the Makefile: go build -ldflags "-X main.version=v1.2.3 -X main.commit=abc1234".
var (
	version string
	commit  string
)

// buildStamp is the version and commit of this binary: the Makefile's stamp, else what the Go
// toolchain recorded (a go install of a tagged module, or a build inside a git checkout).
var buildStamp = sync.OnceValues(func() (v, c string) {
	v, c = version, commit
	info, ok := debug.ReadBuildInfo()
	if v == "" {
		v = "dev"
		if ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		}
	}
	if c == "" {
		c = "unknown"
		if ok {
			for _, s := range info.Settings {
				if s.Key == "vcs.revision" {
					c = s.Value
				}
			}
		}
	}
	return v, c
})

// buildVersion is the version sent in User-Agent and reported by get_device_status.
func buildVersion() string {
	v, _ := buildStamp()
	return v
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, Go version and platform",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, c := buildStamp()
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "devicectl %s\ncommit:   %s\ngo:       %s\nplatform: %s/%s\n",
				v, c, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}
