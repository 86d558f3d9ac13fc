//go:build !devicectl_omit_sim

package buildfeatures

// HasSim reports whether this build has the feature the devicectl_omit_sim tag leaves out (see Features).
const HasSim = true
