package term

import "golang.org/x/sys/unix"

// The requests that read and set a terminal's settings.
const ioctlGetTermios, ioctlSetTermios = unix.TCGETS, unix.TCSETS

// fdIsTerminal asks the terminal driver for fd's settings: only a terminal has them.
func fdIsTerminal(fd uintptr) bool {
	_, err := unix.IoctlGetTermios(int(fd), ioctlGetTermios)
	return err == nil
}
