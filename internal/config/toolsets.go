package config

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"go.yaml.in/yaml/v3"
)

// ToolSetsConfig lists the tools from elsewhere the device declares as its own.
type ToolSetsConfig struct {
	OpenTool []OpenToolSetConfig
	OpenAPI  []OpenAPISetConfig
	MCP      []MCPSetConfig
}

// toolSetSettings are the toolsets section's keys, one list per kind of tool set, in the order
// of configs/devicectl.yaml.
func toolSetSettings() []setting {
	return []setting{openToolSetsKey(), openAPISetsKey(), mcpSetsKey()}
}

// leftOutSetsKey reads a list of tool sets of a kind this build leaves out: one empty item per
// entry, which the daemon then refuses by name (left out of this build), without compiling the
// kind's keys into a binary that cannot use them. An empty list is nil, as itemsKey reads it, so
// that a board sees the same config as a laptop in it (a reload compares them).
func leftOutSetsKey[T any](key, usage string, list func(*Config) *[]T) setting {
	return setting{key: key, usage: usage, typ: "list",
		get: func(c *Config) string { return countItems(len(*list(c))) },
		setItems: func(c *Config, n *yaml.Node) error {
			if read, err := listToRead(key, n); !read {
				return err
			}
			var items []T
			if len(n.Content) > 0 {
				items = make([]T, len(n.Content))
			}
			*list(c) = items
			return nil
		},
	}
}

// LongestToolTimeout is the longest any tool may run by c: the longest of execution.tool_timeout,
// execution.tool_timeouts and the tool sets' timeouts, with the key that sets it (the first in
// key order among equals).
func (c *Config) LongestToolTimeout() (time.Duration, string) {
	longest, which := c.Execution.ToolTimeout, "execution.tool_timeout"
	for _, name := range slices.Sorted(maps.Keys(c.Execution.ToolTimeouts)) {
		if d := c.Execution.ToolTimeouts[name]; d > longest {
			longest, which = d, "execution.tool_timeouts."+name
		}
	}
	// Items are numbered from 1, as in the errors of their own keys.
	for i, s := range c.ToolSets.OpenTool {
		if s.Timeout > longest {
			longest, which = s.Timeout, fmt.Sprintf("toolsets.opentool[%d].timeout", i+1)
		}
	}
	for i, s := range c.ToolSets.OpenAPI {
		if s.Timeout > longest {
			longest, which = s.Timeout, fmt.Sprintf("toolsets.openapi[%d].timeout", i+1)
		}
	}
	for i, s := range c.ToolSets.MCP {
		if s.Timeout > longest {
			longest, which = s.Timeout, fmt.Sprintf("toolsets.mcp[%d].timeout", i+1)
		}
	}
	return longest, which
}

func checkSubType(v string) (string, error) {
	if v != "query" && v != "control" {
		return "", fmt.Errorf("%q is not query or control", v)
	}
	return v, nil
}
