//go:build unix

package netlimit

import "syscall"

// fileLimit is RLIMIT_NOFILE's soft limit, which Go raises to the hard one at start-up.
func fileLimit() (uint64, bool) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil || r.Cur >= 1<<62 { // RLIM_INFINITY: no limit
		return 0, false
	}
	return uint64(r.Cur), true
}
