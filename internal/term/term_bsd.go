//go:build darwin || freebsd || netbsd || openbsd

package term

import "golang.org/x/sys/unix"

// fdIsTerminal asks the terminal driver for fd's settings: only a terminal has them.
func fdIsTerminal(fd uintptr) bool {
	_, err := unix.IoctlGetTermios(int(fd), unix.TIOCGETA)
	return err == nil
}
