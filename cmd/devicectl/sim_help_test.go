//go:build !devicectl_omit_sim

package main

import (
	"strings"
	"testing"
)

// sim's --mac names the simulated device's MAC: sim reads no device.interface, so its help must
// not send people there.
func TestSimMACHelp(t *testing.T) {
	r := runCLI(t.Context(), "", "sim", "--help")
	i := strings.Index(r.stdout, "--mac")
	if r.code != exitOK || i < 0 {
		t.Fatalf("sim --help: exit %d, %q", r.code, r.stdout)
	}
	line, _, _ := strings.Cut(r.stdout[i:], "\n")
	if strings.Contains(line, "interface") || !strings.Contains(line, "simulated device") || !strings.Contains(line, `(default "AA-BB-CC-DD-EE-FF")`) {
		t.Errorf("sim --help says of --mac: %q", line)
	}
}
