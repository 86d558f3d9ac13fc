//go:build !devicectl_omit_mcpsets

package daemon

// MCP tool sets link the MCP Go SDK, which adds 1.4 MB to the armv6 binary, past its 9 MiB
// budget: board builds leave them out with the devicectl_omit_mcpsets tag (BOARD_TAGS). See
// toolsources_nomcp.go.

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/tools"
	"github.com/devicectl/devicectl/tools/mcpset"
)

// mcpSource is an MCP server whose tools become device tools. It keeps its session itself
// (run): the tools change when the server says so, and are left out while it is down.
type mcpSource struct {
	key string // toolsets.mcp[N] NAME, for messages
	set *mcpset.Set
}

func newMCPSource(i int, c config.MCPSetConfig, version string, log *slog.Logger, redact func(string)) (toolSource, error) {
	key := fmt.Sprintf("toolsets.mcp[%d]", i+1)
	o := &mcpset.Options{
		Name:        key + " " + c.Name,
		Command:     c.Command,
		URL:         c.URL,
		Include:     c.Tools,
		Prefix:      c.Prefix,
		Timeout:     c.Timeout,
		InitTimeout: c.InitTimeout,
		Retry:       retry.Delay,
		Version:     version,
		Logger:      log,
	}
	for _, k := range slices.Sorted(maps.Keys(c.Env)) {
		o.Env = append(o.Env, k+"="+c.Env[k])
	}
	if len(c.SubTypes) > 0 {
		o.SubTypes = map[string]tools.SubType{}
		for name, st := range c.SubTypes {
			o.SubTypes[name] = tools.SubType(st)
		}
	}
	if c.TokenFile != "" {
		var err error
		if o.BearerToken, err = config.ReadToken(key+".token_file", c.TokenFile, log); err != nil {
			return nil, err
		}
		redact(o.BearerToken)
	}
	set, err := mcpset.New(o)
	if err != nil {
		k := key + ".url"
		if len(c.Command) > 0 {
			k = key + ".command"
		}
		return nil, &config.Error{Key: k, Err: err}
	}
	return &mcpSource{key: o.Name, set: set}, nil
}

func (s *mcpSource) String() string { return s.key }

// watch: run keeps the source; these only matter to a source without run.
func (s *mcpSource) watch() (time.Duration, time.Duration) { return 0, 0 }

func (s *mcpSource) load(ctx context.Context) ([]*tools.Tool, error) { return s.set.Load(ctx) }

func (s *mcpSource) run(ctx context.Context, update func([]*tools.Tool)) { s.set.Run(ctx, update) }

func (s *mcpSource) close() {}
