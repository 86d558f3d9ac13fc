//go:build linux || darwin || freebsd || netbsd || openbsd

package term

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// EditMode sets the terminal f up for a line editor that draws the line itself: keys arrive one
// at a time and are not echoed. Unlike a raw mode it keeps the rest: Ctrl-C still interrupts the
// process (SIGINT), and a newline written by anyone still returns the carriage, so the output of
// other writers reads as before. restore puts back the settings f had.
func EditMode(f *os.File) (restore func() error, err error) {
	var old *unix.Termios
	cerr := control(f, func(fd uintptr) {
		if old, err = unix.IoctlGetTermios(int(fd), ioctlGetTermios); err != nil {
			return
		}
		t := *old
		t.Lflag &^= unix.ICANON | unix.ECHO | unix.ECHONL | unix.IEXTEN
		t.Cc[unix.VMIN] = 1
		t.Cc[unix.VTIME] = 0
		if err = unix.IoctlSetTermios(int(fd), ioctlSetTermios, &t); err != nil {
			err = fmt.Errorf("setting terminal %s up for line editing: %w", f.Name(), err)
		}
	})
	if err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("terminal %s: %w", f.Name(), err)
	}
	return func() error {
		var err error
		cerr := control(f, func(fd uintptr) { err = unix.IoctlSetTermios(int(fd), ioctlSetTermios, old) })
		if err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("restoring the settings of terminal %s: %w", f.Name(), err)
		}
		return nil
	}, nil
}

// Width is the terminal f's width in columns, 0 when it cannot be read.
func Width(f *os.File) int {
	w := 0
	control(f, func(fd uintptr) {
		if ws, err := unix.IoctlGetWinsize(int(fd), unix.TIOCGWINSZ); err == nil {
			w = int(ws.Col)
		}
	})
	return w
}
