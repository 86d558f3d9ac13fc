package config

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// ControlConfig is the daemon's local control socket, through which `devicectl call` runs a
// tool on the running daemon instead of opening the hardware a second time.
type ControlConfig struct {
	// Socket is the Unix socket's path. Empty: $RUNTIME_DIRECTORY/control.sock, where systemd's
	// RuntimeDirectory= puts it, else one of Config.DefaultSockets; call looks in all of them and
	// DefaultControlSocket too. ControlOff: none.
	Socket string
}

// DefaultControlSocket is where the packaged unit (RuntimeDirectory=devicectl) has the socket:
// `devicectl call` looks there when control.socket is empty.
const DefaultControlSocket = "/run/devicectl/control.sock"

// ControlOff, as control.socket, opens no control socket.
const ControlOff = "off"

// maxSocketPath is what fits in sockaddr_un's sun_path (108 bytes with its NUL on Linux).
const maxSocketPath = 107

func controlSettings() []setting {
	return []setting{
		stringKey("control.socket", "", "the daemon's control socket (a Unix socket, mode 0660), through which `devicectl call` runs a tool on the running daemon; empty: control.sock in the runtime directory systemd gives the service ("+DefaultControlSocket+" with the packaged unit), else in device.state_dir when set, else devicectl/control.sock in $XDG_RUNTIME_DIR, else in the state directory; off: none. Read at start", func(c *Config) *string { return &c.Control.Socket }, checkSocketPath),
	}
}

// checkSocketPath accepts "off" or an absolute path short enough for a Unix socket address.
func checkSocketPath(v string) (string, error) {
	switch {
	case v == ControlOff:
		return v, nil
	case !filepath.IsAbs(v):
		return "", fmt.Errorf("%q is not an absolute path (or off)", v)
	case len(v) > maxSocketPath:
		return "", fmt.Errorf("%q is %d bytes long; a Unix socket's path holds at most %d", v, len(v), maxSocketPath)
	}
	return filepath.Clean(v), nil
}

// ControlSocket is where the daemon listens under systemd or as configured: control.socket, else
// control.sock in the runtime directory systemd names in RUNTIME_DIRECTORY (the first, if
// several). "" means control.socket is off or, outside systemd, that the daemon picks the first
// usable of DefaultSockets.
func (c ControlConfig) ControlSocket(getenv func(string) string) string {
	switch c.Socket {
	case ControlOff:
		return ""
	case "":
		dir, _, _ := strings.Cut(getenv("RUNTIME_DIRECTORY"), ":")
		if dir == "" {
			return ""
		}
		return filepath.Join(dir, "control.sock")
	}
	return c.Socket
}

// DefaultSockets are where a daemon outside systemd, with control.socket empty, may put its
// socket, best first: control.sock in a device.state_dir that is set; devicectl/control.sock in
// the user's runtime directory (XDG_RUNTIME_DIR); control.sock in each state directory StateDirs
// would try. `devicectl call` looks in all of them.
func (c *Config) DefaultSockets(getenv func(string) string) []string {
	if c.Control.Socket != "" || c.Control.ControlSocket(getenv) != "" {
		return nil
	}
	var paths []string
	if c.Device.StateDir != "" {
		return []string{filepath.Join(c.Device.StateDir, "control.sock")}
	}
	if x := getenv("XDG_RUNTIME_DIR"); x != "" {
		paths = append(paths, filepath.Join(x, "devicectl", "control.sock"))
	}
	for _, dir := range StateDirs(c.Device, getenv) {
		paths = append(paths, filepath.Join(dir, "control.sock"))
	}
	return paths
}

// ControlSockets are where `devicectl call` looks for the daemon, in order: the daemon's own
// path, and with control.socket empty, DefaultControlSocket (the packaged unit's) and
// DefaultSockets too, since the daemon's environment is not call's. None when control.socket is
// off.
func (c *Config) ControlSockets(getenv func(string) string) []string {
	var paths []string
	if p := c.Control.ControlSocket(getenv); p != "" {
		paths = append(paths, p)
	}
	if c.Control.Socket != "" {
		return paths
	}
	for _, p := range append([]string{DefaultControlSocket}, c.defaultSocketsForCall(getenv)...) {
		if !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	return paths
}

// defaultSocketsForCall is DefaultSockets as a daemon started without RUNTIME_DIRECTORY picks
// them, whatever call's own environment says of systemd.
func (c *Config) defaultSocketsForCall(getenv func(string) string) []string {
	return c.DefaultSockets(func(k string) string {
		if k == "RUNTIME_DIRECTORY" {
			return ""
		}
		return getenv(k)
	})
}
