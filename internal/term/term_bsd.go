//go:build darwin || freebsd || netbsd || openbsd

package term

import "golang.org/x/sys/unix"

// The requests that read and set a terminal's settings.
const ioctlGetTermios, ioctlSetTermios = unix.TIOCGETA, unix.TIOCSETA

// fdIsTerminal asks the terminal driver for fd's settings: only a terminal has them.
func fdIsTerminal(fd uintptr) bool {
	_, err := unix.IoctlGetTermios(int(fd), ioctlGetTermios)
	return err == nil
}
