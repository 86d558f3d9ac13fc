package swarm

import (
	"crypto/tls"
	"io"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/internal/config"
	devhw "github.com/devicectl/devicectl/internal/hardware"
	"github.com/devicectl/devicectl/internal/logging"
	"github.com/devicectl/devicectl/internal/term"
)

// ConfigIO is where FromConfig's swarm writes, and what it reads besides the config.
type ConfigIO struct {
	Out, Err io.Writer           // status lines; logs, with the token redacted
	Getenv   func(string) string // the token's environment variable
	Version  string              // sent in User-Agent and reported by get_device_status
	// Talk, when set, is the load generator (Options.Talk); its TLS settings are the devices'.
	// Add its token to the redactor: FromConfig does.
	Talk *Talk
}

// FromConfig makes the swarm of c's devices, each what `devicectl run --hardware sim` is: its own
// simulated parts, tool registry and device.Agent. The token and TLS settings are read once, for
// all.
func FromConfig(c *config.Config, p Plan, o *ConfigIO) (*Swarm, error) {
	stdout, stderr := o.Out, o.Err
	redact := logging.NewRedactor(stderr)
	var (
		s       *Swarm // Build runs once Run has started, after these are set
		token   string
		tlsConf *tls.Config
		err     error
	)
	var talk *Talk
	if o.Talk != nil {
		t := *o.Talk
		talk = &t
	}
	s, err = New(p, &Options{
		Talk:     talk,
		Out:      stdout,
		Err:      redact,
		Terminal: term.IsTerminal(stdout),
		Handler:  logging.NewHandler(redact, config.LogOptions(c.Log, stderr)),
		// Each device gets its own hardware and registry: the built-in tools hold their device's
		// speaker and face, and get_device_status its connection state.
		Build: func(d *Device) (Agent, func() error, error) {
			hw := devhw.Sim(nil)
			reg, err := devhw.NewRegistry(hw, c, o.Version, d.ConnState)
			if err != nil {
				return nil, nil, err
			}
			a, err := device.New(c.AgentOptions(config.AgentSettings{
				MAC:        d.MAC,
				Version:    o.Version,
				ClientID:   d.ClientID,
				Token:      token,
				TLS:        tlsConf,
				Registry:   reg,
				Render:     d.Render,
				Logger:     s.Logger(),
				OnState:    d.OnState,
				OnLineLost: d.OnLineLost,
				OnCall:     d.OnCall,
			}))
			if err != nil {
				return nil, nil, err
			}
			return a, hw.Halt, nil
		},
	})
	if err != nil {
		return nil, err
	}
	if token, err = config.LoadToken(c.Server, o.Getenv, s.Logger()); err != nil {
		return nil, err
	}
	redact.Add(token)
	if tlsConf, err = config.TLSConfig(c.Server, s.Logger()); err != nil {
		return nil, err
	}
	if s.talk != nil {
		redact.Add(s.talk.t.Token)
		s.talk.setTLS(tlsConf)
	}
	return s, nil
}
