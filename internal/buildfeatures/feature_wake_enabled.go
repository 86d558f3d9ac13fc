//go:build !devicectl_omit_wake

package buildfeatures

// HasWake reports whether this build has the feature the devicectl_omit_wake tag leaves out (see Features).
const HasWake = true
