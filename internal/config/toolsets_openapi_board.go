//go:build !openapi && devicectl_omit_serve

package config

// openAPISetsKey is toolsets.openapi in a board build, which has no OpenAPI tool sets.
func openAPISetsKey() setting {
	return leftOutSetsKey("toolsets.openapi", "OpenAPI documents as tool sets (not in this build)", func(c *Config) *[]OpenAPISetConfig { return &c.ToolSets.OpenAPI })
}
