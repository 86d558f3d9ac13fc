//go:build !unix

package netlimit

// fileLimit knows no open-file limit here.
func fileLimit() (uint64, bool) { return 0, false }
