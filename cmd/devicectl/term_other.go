//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd

package main

// fdIsTerminal is false where devicectl cannot ask: the console then reads its input as a script,
// which is the safe reading.
func fdIsTerminal(uintptr) bool { return false }
