package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/devicectl/devicectl/tools/builtin"
)

// checkToolName refuses an execution.tool_timeouts entry that names none of the device's tools.
func checkToolName(name string) error {
	if !slices.Contains(builtin.Names(), name) {
		return fmt.Errorf("no such tool (the tools are %s)", strings.Join(builtin.Names(), ", "))
	}
	return nil
}

// CheckToolTimeouts refuses tool timeouts naming none of the device's tools, for a Config built
// in code; those of the file and flags were checked as they were parsed.
func CheckToolTimeouts(c *Config) error {
	names := make([]string, 0, len(c.Execution.ToolTimeouts))
	for name := range c.Execution.ToolTimeouts {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if err := checkToolName(name); err != nil {
			return &Error{Key: "execution.tool_timeouts." + name, Err: err}
		}
	}
	return nil
}
