//go:build nethttpomithttp2

package buildfeatures

// HasHTTP2 reports whether this build has the feature the nethttpomithttp2 tag leaves out (see Features).
const HasHTTP2 = false
