//go:build !devicectl_omit_sim

package main

import (
	"os"
	"testing"
)

// The scripted session's whole output is fixed: it is the README's screenshot.
func TestSimGolden(t *testing.T) {
	script, err := os.ReadFile("testdata/sim.txt")
	if err != nil {
		t.Fatal(err)
	}
	r := runCLI(t.Context(), string(script), "sim")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	const golden = "testdata/sim.golden"
	if *update {
		if err := os.WriteFile(golden, []byte(r.stdout), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if r.stdout != string(want) {
		t.Errorf("output differs from %s (go test -run TestSimGolden -update rewrites it; then update README.md):\n%s", golden, r.stdout)
	}
}
