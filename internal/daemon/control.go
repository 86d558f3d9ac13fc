package daemon

import (
	"time"

	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/control"
)

// startControl opens the control socket c asks for (control.socket, by default in the runtime
// directory systemd gives the service), through which `devicectl call` runs tools on this
// daemon: through the agent's own call path, so they queue with the server's calls on the same
// parts and get the same checks and timeouts. Nil when there is none. The socket stays as it was
// opened across reloads.
func (d *Daemon) startControl(c *config.Config) (*control.Server, error) {
	path := c.Control.ControlSocket(d.opts.Getenv)
	if path == "" {
		d.log.Debug("no control socket (control.socket is off, or systemd gave no runtime directory)")
		return nil, nil
	}
	s, err := control.Listen(path, &control.Options{Call: d.agent.Call, Logger: d.log})
	if err != nil {
		return nil, &config.Error{Key: "control.socket", Err: err}
	}
	return s, nil
}

// closeControl closes s, if any, once the agent has stopped: a call still waiting there is
// answered "shutting down" by then, and gets grace to be written.
func closeControl(s *control.Server, grace time.Duration) {
	if s != nil {
		s.Close(grace)
	}
}
