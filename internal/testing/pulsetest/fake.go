package pulsetest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Fake writes a shell script called name standing in for a program (amixer, pactl, wpctl) and
// returns its path. Each run appends its arguments, one a line, then "--", to a file beside it
// that Calls reads; body runs after that, with $dir set to the script's directory for any state
// it keeps.
func Fake(t testing.TB, name, body string) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, name)
	script := "#!/bin/sh\ndir=$(dirname \"$0\")\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >> \"$dir/argv\"\necho -- >> \"$dir/argv\"\n" + body
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// Calls returns the argument lists the Fake at path was run with, in order.
func Calls(t testing.TB, path string) [][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(filepath.Dir(path), "argv"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	cur := []string{}
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if l == "--" {
			out = append(out, cur)
			cur = []string{}
			continue
		}
		cur = append(cur, l)
	}
	return out
}
