//go:build !devicectl_omit_mcpsets

package buildfeatures

// HasMCPSets reports whether this build has the feature the devicectl_omit_mcpsets tag leaves out (see Features).
const HasMCPSets = true
