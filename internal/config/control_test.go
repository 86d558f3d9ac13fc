package config

import (
	"slices"
	"strings"
	"testing"
)

// Where the daemon listens and where call looks, for each value of control.socket, under systemd
// and outside it.
func TestControlSockets(t *testing.T) {
	env := func(runtime, xdg string) func(string) string {
		return func(k string) string {
			switch k {
			case "RUNTIME_DIRECTORY":
				return runtime
			case "XDG_RUNTIME_DIR":
				return xdg
			case "XDG_STATE_HOME":
				return "/home/u/.local/state"
			}
			return ""
		}
	}
	userState := "/home/u/.local/state/devicectl/control.sock"
	varLib := systemStateDir + "/control.sock"
	cases := []struct {
		socket, stateDir, runtime, xdg string
		daemon                         string   // under systemd or configured
		defaults                       []string // outside systemd, best first
		call                           []string
	}{
		{"", "", "", "", "", []string{varLib, userState}, []string{DefaultControlSocket, varLib, userState}},
		{"", "", "", "/run/user/1000", "", []string{"/run/user/1000/devicectl/control.sock", varLib, userState},
			[]string{DefaultControlSocket, "/run/user/1000/devicectl/control.sock", varLib, userState}},
		{"", "/srv/robot", "", "/run/user/1000", "", []string{"/srv/robot/control.sock"}, []string{DefaultControlSocket, "/srv/robot/control.sock"}},
		{"", "", "/run/devicectl", "", DefaultControlSocket, nil, []string{DefaultControlSocket, varLib, userState}},
		{"", "", "/run/other:/run/more", "", "/run/other/control.sock", nil, []string{"/run/other/control.sock", DefaultControlSocket, varLib, userState}},
		{"/tmp/d/ctl.sock", "", "/run/devicectl", "", "/tmp/d/ctl.sock", nil, []string{"/tmp/d/ctl.sock"}},
		{ControlOff, "", "/run/devicectl", "", "", nil, nil},
	}
	for _, tc := range cases {
		c := Defaults()
		c.Control.Socket, c.Device.StateDir = tc.socket, tc.stateDir
		getenv := env(tc.runtime, tc.xdg)
		if got := c.Control.ControlSocket(getenv); got != tc.daemon {
			t.Errorf("%+v: the daemon listens on %q, want %q", tc, got, tc.daemon)
		}
		if got := c.DefaultSockets(getenv); !slices.Equal(got, tc.defaults) {
			t.Errorf("%+v: the daemon's default sockets are %q, want %q", tc, got, tc.defaults)
		}
		if got := c.ControlSockets(getenv); !slices.Equal(got, tc.call) {
			t.Errorf("%+v: call looks in %q, want %q", tc, got, tc.call)
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
