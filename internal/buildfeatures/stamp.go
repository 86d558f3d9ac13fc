package buildfeatures

import (
	"runtime/debug"
	"strings"
)

// Stamp returns the version and commit of this binary: the ones the Makefile stamps in with
// -ldflags -X (version, commit), else what the Go toolchain recorded (a go install of a tagged
// module, or a build inside a git checkout), else "dev" and "unknown".
func Stamp(version, commit string) (v, c string) {
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
}

// OmittedLine is the line of `devicectl version` that names the features this build leaves out,
// "" when it has them all.
func OmittedLine() string {
	var names []string
	for _, f := range Omitted() {
		names = append(names, f.Name)
	}
	if len(names) == 0 {
		return ""
	}
	return "omitted:  " + strings.Join(names, ", ") + " (make build has them)\n"
}
