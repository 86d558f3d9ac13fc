// Package term tells whether a stream is a terminal, for the choices made on that: the human log
// format, colour, an interactive console.
package term

import "os"

// IsTerminal reports whether v is an *os.File open on a terminal. A character device is not
// enough: /dev/null is one, and a service started with its input there must not wait for a person.
func IsTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && fdIsTerminal(f.Fd())
}
