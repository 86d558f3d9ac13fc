//go:build !openapi && devicectl_omit_serve

package config

import "testing"

func TestOpenAPISetsLeftOut(t *testing.T) {
	checkLeftOut(t, "toolsets.openapi", func(c *Config) int { return len(c.ToolSets.OpenAPI) })
}
