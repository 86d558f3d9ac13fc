package config

import (
	"slices"
	"strings"
	"testing"
)

// Where the daemon listens and where call looks, for each value of control.socket.
func TestControlSockets(t *testing.T) {
	env := func(runtime string) func(string) string {
		return func(k string) string {
			if k == "RUNTIME_DIRECTORY" {
				return runtime
			}
			return ""
		}
	}
	cases := []struct {
		socket, runtime string
		daemon          string
		call            []string
	}{
		{"", "", "", []string{DefaultControlSocket}},
		{"", "/run/devicectl", DefaultControlSocket, []string{DefaultControlSocket}},
		{"", "/run/other:/run/more", "/run/other/control.sock", []string{"/run/other/control.sock", DefaultControlSocket}},
		{"/tmp/d/ctl.sock", "/run/devicectl", "/tmp/d/ctl.sock", []string{"/tmp/d/ctl.sock"}},
		{ControlOff, "/run/devicectl", "", nil},
	}
	for _, tc := range cases {
		c := ControlConfig{Socket: tc.socket}
		if got := c.ControlSocket(env(tc.runtime)); got != tc.daemon {
			t.Errorf("socket %q, RUNTIME_DIRECTORY %q: the daemon listens on %q, want %q", tc.socket, tc.runtime, got, tc.daemon)
		}
		if got := c.ControlSockets(env(tc.runtime)); !slices.Equal(got, tc.call) {
			t.Errorf("socket %q, RUNTIME_DIRECTORY %q: call looks in %q, want %q", tc.socket, tc.runtime, got, tc.call)
		}
	}
}

func TestControlSocketValues(t *testing.T) {
	c := Defaults()
	if err := Parse([]byte("control:\n  socket: /run/x/../devicectl/c.sock\n"), c); err != nil || c.Control.Socket != "/run/devicectl/c.sock" {
		t.Errorf("got %q, %v; want the path cleaned", c.Control.Socket, err)
	}
	long := "/" + strings.Repeat("a", maxSocketPath)
	err := Parse([]byte("control:\n  socket: "+long+"\n"), Defaults())
	if err == nil || !strings.Contains(err.Error(), "control.socket: ") || !strings.Contains(err.Error(), "at most 107") {
		t.Errorf("a %d-byte path: %v, want an error saying a socket path holds at most 107 bytes", len(long), err)
	}
}
