package daemon

import (
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/control"
)

// startControl opens the control socket c asks for (control.socket, by default in the runtime
// directory systemd gives the service, else the first usable of config.DefaultSockets), through
// which `devicectl call` runs tools on this daemon: through the agent's own call path, so they
// queue with the server's calls on the same parts and get the same checks and timeouts. Nil when
// there is none. The socket stays as it was opened across reloads.
func (d *Daemon) startControl(c *config.Config) (*control.Server, error) {
	opts := &control.Options{Call: d.agent.Call, Logger: d.log}
	if path := c.Control.ControlSocket(d.opts.Getenv); path != "" {
		s, err := control.Listen(path, opts)
		if err != nil {
			return nil, &config.Error{Key: "control.socket", Err: err}
		}
		return s, nil
	}
	defaults := c.DefaultSockets(d.opts.Getenv)
	if len(defaults) == 0 {
		d.log.Debug("no control socket (control.socket is off)")
		return nil, nil
	}
	// Started by hand: a default place is a convenience, so one that fails is tried past, and
	// none at all only costs `devicectl call` its way to this daemon.
	var errs []error
	for _, path := range defaults {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			errs = append(errs, err)
			continue
		}
		s, err := control.Listen(path, opts)
		if err == nil {
			return s, nil
		}
		errs = append(errs, err)
	}
	d.log.Warn("no control socket: devicectl call cannot reach this daemon (set control.socket)", "err", errors.Join(errs...))
	return nil, nil
}

// closeControl closes s, if any, once the agent has stopped: a call still waiting there is
// answered "shutting down" by then, and gets grace to be written.
func closeControl(s *control.Server, grace time.Duration) {
	if s != nil {
		s.Close(grace)
	}
}
