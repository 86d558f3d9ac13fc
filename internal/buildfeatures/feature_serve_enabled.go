//go:build !devicectl_omit_serve

package buildfeatures

// HasServe reports whether this build has the feature the devicectl_omit_serve tag leaves out (see Features).
const HasServe = true
