// Package shscript writes the shell scripts tests put in place of a real program (a face, a
// speech synthesizer, a hook).
package shscript

import (
	"os"
	"path/filepath"
	"testing"
)

// Write writes an executable /bin/sh script of body into dir as name and returns its path.
func Write(t testing.TB, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}
