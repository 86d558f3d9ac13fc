package procgroup

import (
	"errors"

	"golang.org/x/sys/unix"
)

// waitExited blocks until process pid has exited, leaving it to be reaped (WNOWAIT).
func waitExited(pid int) error {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}
