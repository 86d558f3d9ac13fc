package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/devicectl/devicectl/internal/buildfeatures"
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

// omittedLine names the features this build leaves out, "" when it has them all.
func omittedLine() string {
	var names []string
	for _, f := range buildfeatures.Omitted() {
		names = append(names, f.Name)
	}
	if len(names) == 0 {
		return ""
	}
	return "omitted:  " + strings.Join(names, ", ") + " (make build has them)\n"
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, Go version, platform and the features left out",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, c := buildStamp()
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "devicectl %s\ncommit:   %s\ngo:       %s\nplatform: %s/%s\n%s",
				v, c, runtime.Version(), runtime.GOOS, runtime.GOARCH, omittedLine())
			return err
		},
	}
}
