//go:build !devicectl_omit_sim

package main

import (
	"encoding/json"
	"testing"

	"github.com/devicectl/devicectl/internal/config"
)

// What `devicectl tools` prints is what a server receives from the device.
func TestToolsMatchesTheWire(t *testing.T) {
	r := runCLI(t.Context(), "", "tools", "--config", "/dev/null", "--mac", "AA-BB-CC-DD-EE-02")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var printed registration
	if err := json.Unmarshal([]byte(r.stdout), &printed); err != nil {
		t.Fatal(err)
	}

	l, err := startLocal(t.Context(), config.Defaults(), "AA-BB-CC-DD-EE-02", discard())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.Device.MAC != printed.Params.MAC {
		t.Errorf("server saw MAC %s, tools printed %s", l.Device.MAC, printed.Params.MAC)
	}
	if len(l.Device.Tools) != len(printed.Params.Tools) {
		t.Fatalf("server saw %d tools, tools printed %d", len(l.Device.Tools), len(printed.Params.Tools))
	}
	for i, d := range l.Device.Tools {
		if got, want := compact(t, printed.Params.Tools[i]), marshal(t, d); got != want {
			t.Errorf("tool %d:\nprinted %s\nwire    %s", i, got, want)
		}
	}
}
