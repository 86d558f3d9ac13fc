//go:build !devicectl_omit_serve

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/devicectl/devicectl/internal/testing/boundmac"
	"github.com/devicectl/devicectl/internal/testing/standin"
)

// doctor registers as the device, with the Client-Id run keeps, and shows why the server refuses
// it: here the MAC is bound to another board, and the row gives the server's reason.
func TestDoctorShowsRefusal(t *testing.T) {
	const mac = "AA-BB-CC-DD-EE-04"
	url := boundmac.Serve(t, mac, "the-other-board")

	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	os.Mkdir(state, 0o700)
	os.WriteFile(filepath.Join(state, "client-id"), []byte("0f8e3b1c-1111-4222-8333-444455556666\n"), 0o600)
	config := standin.WriteFile(t, "devicectl.yaml", "device:\n  state_dir: "+state+"\ncontrol:\n  socket: off\n")
	args := []string{"doctor", "--config", config, "--server", url, "--mac", mac, "--hardware", "sim"}
	r := runCLI(t.Context(), "", args...)
	if r.code != exitError || !regexp.MustCompile(`register +FAIL +refused: -32602 Invalid params: MAC `+mac+` is bound to another client`).MatchString(r.stdout) {
		t.Errorf("exit %d; want a register FAIL with the server's reason in:\n%s", r.code, r.stdout)
	}

	// The MAC's own board passes.
	os.WriteFile(filepath.Join(state, "client-id"), []byte("the-other-board\n"), 0o600)
	if r := runCLI(t.Context(), "", args...); r.code != exitOK || !regexp.MustCompile(`register +OK`).MatchString(r.stdout) {
		t.Errorf("exit %d; want register OK in:\n%s", r.code, r.stdout)
	}
}
