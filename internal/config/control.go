package config

import (
	"fmt"
	"path/filepath"
	"strings"
)

// ControlConfig is the daemon's local control socket, through which `devicectl call` runs a
// tool on the running daemon instead of opening the hardware a second time.
type ControlConfig struct {
	// Socket is the Unix socket's path. Empty: $RUNTIME_DIRECTORY/control.sock, where systemd's
	// RuntimeDirectory= puts it (the daemon opens none outside systemd), and call looks in
	// DefaultControlSocket too; ControlOff: none.
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
		stringKey("control.socket", "", "the daemon's control socket (a Unix socket, mode 0660), through which `devicectl call` runs a tool on the running daemon; empty: control.sock in the runtime directory systemd gives the service ("+DefaultControlSocket+" with the packaged unit), none outside systemd; off: none. Read at start", func(c *Config) *string { return &c.Control.Socket }, checkSocketPath),
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

// ControlSocket is where the daemon listens: control.socket, else control.sock in the runtime
// directory systemd names in RUNTIME_DIRECTORY (the first, if several). "" means no socket.
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

// ControlSockets are where `devicectl call` looks for the daemon, in order: the daemon's own
// path, and with control.socket empty, DefaultControlSocket too, since the daemon's
// RUNTIME_DIRECTORY is not call's. None when control.socket is off.
func (c ControlConfig) ControlSockets(getenv func(string) string) []string {
	var paths []string
	if p := c.ControlSocket(getenv); p != "" {
		paths = append(paths, p)
	}
	if c.Socket == "" && (len(paths) == 0 || paths[0] != DefaultControlSocket) {
		paths = append(paths, DefaultControlSocket)
	}
	return paths
}
