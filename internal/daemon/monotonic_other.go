//go:build !linux

package daemon

// monotonicUsec is 0 where there is no systemd to read it.
func monotonicUsec() int64 { return 0 }
