//go:build !devicectl_omit_stt

package buildfeatures

// HasSTT reports whether this build has the feature the devicectl_omit_stt tag leaves out (see Features).
const HasSTT = true
