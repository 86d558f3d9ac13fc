package mcpset_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/devicectl/devicectl/tools"
	"github.com/devicectl/devicectl/tools/mcpset"
)

// A device's tool set from the MCP reference server, started over stdio: Run hands every change
// of its tools to the function, which here registers them in a fresh registry.
func ExampleSet_Run() {
	set, err := mcpset.New(&mcpset.Options{
		Name:    "everything",
		Command: []string{"npx", "-y", "@modelcontextprotocol/server-everything@2026.8.31", "stdio"},
		Prefix:  "everything_",
		Logger:  slog.New(slog.NewTextHandler(os.Stderr, nil)),
	})
	if err != nil {
		fmt.Println(err) // npx is not installed
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	set.Run(ctx, func(ts []*tools.Tool) {
		reg := tools.NewRegistry()
		for _, t := range ts {
			_ = reg.Add(t) // the set only hands out tools the registry takes
		}
		// device.Agent.SetRegistry(reg) declares them on the live line.
		cancel()
	})
}
