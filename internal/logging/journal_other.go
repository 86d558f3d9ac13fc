//go:build !unix

package logging

import "os"

// IsJournal reports whether f is the stream systemd connected to the journal. There is no
// systemd here, so it is always false.
func IsJournal(f *os.File, getenv func(string) string) bool { return false }
