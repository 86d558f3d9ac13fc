//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd

package term

import (
	"errors"
	"os"
)

// fdIsTerminal is false where devicectl cannot ask: a console then reads its input as a script,
// which is the safe reading.
func fdIsTerminal(uintptr) bool { return false }

// EditMode is not available here; IsTerminal is false, so no console asks for it.
func EditMode(*os.File) (restore func() error, err error) {
	return nil, errors.New("line editing is not supported on this system")
}

// Width is 0: unknown.
func Width(*os.File) int { return 0 }
