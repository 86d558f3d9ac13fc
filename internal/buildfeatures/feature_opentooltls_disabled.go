//go:build devicectl_omit_opentooltls

package buildfeatures

// HasOpenToolTLS reports whether this build has the feature the devicectl_omit_opentooltls tag leaves out (see Features).
const HasOpenToolTLS = false
