//go:build unix

package logging

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// IsJournal reports whether f is the stream systemd connected to the journal: the
// JOURNAL_STREAM environment variable (as returned by getenv; nil means os.Getenv) is
// "DEV:INODE" and names f's device and inode. It is false on any error or mismatch, as when a
// user running devicectl under systemd redirected stderr to a file: JOURNAL_STREAM is inherited,
// but the stream is no longer the journal's.
func IsJournal(f *os.File, getenv func(string) string) bool {
	if f == nil {
		return false
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	devS, inoS, ok := strings.Cut(getenv("JOURNAL_STREAM"), ":")
	if !ok {
		return false
	}
	dev, err := strconv.ParseUint(devS, 10, 64)
	if err != nil {
		return false
	}
	ino, err := strconv.ParseUint(inoS, 10, 64)
	if err != nil {
		return false
	}
	fi, err := f.Stat() // fstat(2) on f's descriptor
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	// The field types differ between systems; the conversions are no-ops on Linux.
	return uint64(st.Dev) == dev && uint64(st.Ino) == ino
}
