package safefile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// NotRegularError is Open's error for a path that leads to something other than a regular file.
type NotRegularError struct {
	Path   string
	Mode   fs.FileMode // of the opened file, symlinks followed
	Target string      // where Path points when it is a symlink; "" otherwise
}

func (e *NotRegularError) Error() string {
	via := ""
	if e.Target != "" {
		via = " (a symlink to " + e.Target + ")"
	}
	return fmt.Sprintf("%s%s is %s, not a regular file", e.Path, via, Kind(e.Mode))
}

// TooLargeError is ReadFile's error for a file longer than its cap.
type TooLargeError struct {
	Path string
	Max  int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %s, the most read from such a file", e.Path, Size(e.Max))
}

// Kind names the type of file m describes, for messages: "a directory", "a named pipe (FIFO)".
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	}
	return "a special file"
}

// Size writes n bytes as a person would: "1 MiB", "64 KiB", "300 bytes".
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Open opens path for reading if it is a regular file (symlinks followed) or /dev/null, the usual
// way to say "an empty file", and returns a *NotRegularError otherwise. It never blocks on the
// kind of file path is: a FIFO is opened without waiting for a writer, then refused. A device is
// refused before it is opened, since opening some has effects (/dev/watchdog arms the watchdog).
func Open(path string) (*os.File, error) {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() && !isDevNull(fi) {
		return nil, notRegular(path, fi)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|nonBlock, 0)
	if err != nil {
		return nil, err
	}
	// The opened file, not the path: a path swapped after this check is not read.
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() && !isDevNull(fi) {
		f.Close()
		return nil, notRegular(path, fi)
	}
	return f, nil
}

func notRegular(path string, fi os.FileInfo) *NotRegularError {
	e := &NotRegularError{Path: path, Mode: fi.Mode()}
	if target, err := os.Readlink(path); err == nil {
		e.Target = target
	}
	return e
}

// ReadFile returns the content of the regular file path, refusing (with a *TooLargeError) one
// longer than max bytes, without reading more than max+1 of it.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(f, path, max)
}

// ReadAll reads f (opened from path, which errors name) to its end, refusing with a
// *TooLargeError one longer than max bytes.
func ReadAll(f io.Reader, path string, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, &TooLargeError{Path: path, Max: max}
	}
	return b, nil
}

// isDevNull reports whether fi is os.DevNull's: it reads as empty, never blocks and never ends
// late.
func isDevNull(fi fs.FileInfo) bool {
	null, err := os.Stat(os.DevNull)
	return err == nil && os.SameFile(fi, null)
}
