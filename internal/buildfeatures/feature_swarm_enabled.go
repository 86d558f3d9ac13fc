//go:build !devicectl_omit_swarm

package buildfeatures

// HasSwarm reports whether this build has the feature the devicectl_omit_swarm tag leaves out (see Features).
const HasSwarm = true
