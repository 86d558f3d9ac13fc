// Package term tells whether a stream is a terminal, for the choices made on that: the human log
// format, colour, an interactive console. For the console it also edits the line typed (Editor,
// in display columns: RuneWidth counts a Chinese character as two), and makes what a peer sent
// safe to show (Sanitize: its control characters and escape sequences are shown, not obeyed).
package term

import "os"

// IsTerminal reports whether v is an *os.File open on a terminal. A character device is not
// enough: /dev/null is one, and a service started with its input there must not wait for a person.
func IsTerminal(v any) bool {
	f, ok := v.(*os.File)
	if !ok {
		return false
	}
	is := false
	err := control(f, func(fd uintptr) { is = fdIsTerminal(fd) })
	return err == nil && is
}

// control runs fn with f's descriptor. Unlike f.Fd, it leaves a descriptor that Go's poller owns
// in non-blocking mode, so a Close still ends a read in progress.
func control(f *os.File, fn func(fd uintptr)) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	return rc.Control(fn)
}
