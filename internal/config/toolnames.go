package config

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/devicectl/devicectl/hal/sim"
	"github.com/devicectl/devicectl/tools"
	"github.com/devicectl/devicectl/tools/builtin"
)

// builtinNames lists every tool of the device's own there could be: those of a device with all
// its parts. The names do not depend on the language.
var builtinNames = sync.OnceValue(func() []string {
	r := tools.NewRegistry()
	if err := builtin.Register(r, &builtin.Options{Speaker: sim.NewSpeaker(nil), Face: sim.NewFace(nil), Language: "en"}); err != nil {
		panic("config: the built-in tools do not register: " + err.Error())
	}
	var names []string
	for _, t := range r.Tools() {
		names = append(names, t.Name)
	}
	return names
})

// checkToolName refuses an execution.tool_timeouts entry that names none of the device's tools.
func checkToolName(name string) error {
	if !slices.Contains(builtinNames(), name) {
		return fmt.Errorf("no such tool (the tools are %s)", strings.Join(builtinNames(), ", "))
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
