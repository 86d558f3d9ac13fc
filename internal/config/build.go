package config

import (
	"crypto/tls"
	"io"
	"log/slog"
	"os"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/internal/logging"
	"github.com/devicectl/devicectl/internal/term"
	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
	"github.com/devicectl/devicectl/transport"
)

// NewLogger returns the logger c asks for, writing to w.
func NewLogger(c LogConfig, w io.Writer) *slog.Logger {
	return slog.New(logging.NewHandler(w, LogOptions(c, w)))
}

// LogOptions resolves c for output to w: format auto is human on a terminal and text elsewhere;
// in the systemd journal every format leaves the time to journald and marks each line with its
// priority, so `journalctl -p warning` finds the warnings.
func LogOptions(c LogConfig, w io.Writer) *logging.Options {
	f, _ := w.(*os.File)
	journal := f != nil && logging.IsJournal(f, os.Getenv)
	tty := !journal && term.IsTerminal(w)
	format := c.Format
	if format == "auto" {
		format = "text"
		if tty {
			format = "human"
		}
	}
	return &logging.Options{Level: c.Level, Format: format, Journal: journal, Color: tty && os.Getenv("NO_COLOR") == ""}
}

// ColorOn resolves render.color for output to w: auto means colour when w is a terminal.
func (c RenderConfig) ColorOn(w io.Writer) bool {
	switch c.Color {
	case "always":
		return true
	case "never":
		return false
	}
	return term.IsTerminal(w)
}

// AgentSettings are what a command knows besides its Config when it builds an agent.
type AgentSettings struct {
	MAC, ClientID, Token string
	Version              string // sent in User-Agent
	TLS                  *tls.Config
	Registry             *tools.Registry
	Render               func(protocol.AIMessage)
	Logger               *slog.Logger
	OnState              func(device.State)
	OnLineLost           func(error)
	OnCall               func(device.CallReport)
}

// AgentOptions maps the configuration onto device.Options.
func (c *Config) AgentOptions(s AgentSettings) *device.Options {
	return &device.Options{
		URLs:     c.Server.Servers(),
		MAC:      s.MAC,
		ClientID: s.ClientID,
		Version:  s.Version,
		Dial: &transport.DialOptions{
			Token:            s.Token,
			TLSConfig:        s.TLS,
			ReadLimit:        c.Connection.ReadLimit,
			PingInterval:     c.Connection.PingInterval,
			PingTimeout:      c.Connection.PingTimeout,
			HandshakeTimeout: c.Connection.HandshakeTimeout,
			// Logger: the agent gives the transport its own.
		},
		Registry:        s.Registry,
		Render:          s.Render,
		MaxInFlight:     c.Execution.MaxInFlight,
		MaxQueued:       c.Execution.deviceMaxQueued(),
		ToolTimeout:     c.Execution.ToolTimeout,
		DrainTimeout:    c.Execution.DrainTimeout,
		RegisterTimeout: c.Connection.RegisterTimeout,
		Backoff: device.Backoff{
			Min:        c.Connection.BackoffMin,
			Max:        c.Connection.BackoffMax,
			ResetAfter: c.Connection.BackoffReset,
		},
		Logger:     s.Logger,
		OnState:    s.OnState,
		OnLineLost: s.OnLineLost,
		OnCall:     s.OnCall,
	}
}

// deviceMaxQueued is execution.max_queued as device.Options takes it: there 0 is the default
// (256) and a negative value is no queue, which the config's 0 means.
func (e ExecutionConfig) deviceMaxQueued() int {
	if e.MaxQueued == 0 {
		return -1
	}
	return e.MaxQueued
}
