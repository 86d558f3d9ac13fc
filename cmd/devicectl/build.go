package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/internal/logging"
	"github.com/devicectl/devicectl/tools"
	"github.com/devicectl/devicectl/tools/builtin"
	"github.com/devicectl/devicectl/transport"
)

// This file turns a Config into the pieces the commands wire together: logger, hardware, tool
// registry, identity, credentials and the agent's options.

// tokenEnv is the environment variable read for the bearer token when server.token_file is unset.
const tokenEnv = "DEVICECTL_TOKEN"

// systemStateDir is where a packaged device keeps its state (systemd's StateDirectory=devicectl).
const systemStateDir = "/var/lib/devicectl"

// newLogger returns the logger c asks for, writing to w.
func newLogger(c LogConfig, w io.Writer) *slog.Logger {
	return slog.New(logging.NewHandler(w, logOptions(c, w)))
}

// logOptions resolves c for output to w: format auto is human on a terminal and text elsewhere;
// in the systemd journal every format leaves the time to journald and marks each line with its
// priority, so `journalctl -p warning` finds the warnings.
func logOptions(c LogConfig, w io.Writer) *logging.Options {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.Level)); err != nil {
		level = slog.LevelInfo // unreachable: log.level is checked when parsed
	}
	f, _ := w.(*os.File)
	journal := f != nil && logging.IsJournal(f, os.Getenv)
	term := !journal && isTerminal(w)
	format := c.Format
	if format == "auto" {
		format = "text"
		if term {
			format = "human"
		}
	}
	return &logging.Options{Level: level, Format: format, Journal: journal, Color: term && os.Getenv("NO_COLOR") == ""}
}

// newRegistry returns the device's tools on hw, with the per-tool timeouts of c applied.
// connState reports the session state for get_device_status; nil means unknown.
func newRegistry(hw *hardware, c *Config, connState func() string) (*tools.Registry, error) {
	r := tools.NewRegistry()
	err := builtin.Register(r, &builtin.Options{
		Speaker:   hw.Speaker,
		Face:      hw.Face,
		Language:  c.Device.Language,
		Version:   buildVersion(),
		ConnState: connState,
	})
	if err != nil {
		return nil, fmt.Errorf("registering built-in tools: %w", err)
	}
	for name, d := range c.Execution.ToolTimeouts {
		t, ok := r.Lookup(name)
		if !ok {
			if all, _ := newRegistry(simHardware(nil), &Config{Device: c.Device}, nil); all != nil {
				if _, known := all.Lookup(name); known {
					continue // its part is missing (optional), and with it the tool
				}
				r = all // name every tool there could be
			}
			return nil, &ConfigError{Key: "execution.tool_timeouts." + name, Err: fmt.Errorf("no such tool (the tools are %s)", toolNames(r))}
		}
		t.Timeout = d
	}
	return r, nil
}

func toolNames(r *tools.Registry) string {
	var names []string
	for _, t := range r.Tools() {
		names = append(names, t.Name)
	}
	return strings.Join(names, ", ")
}

// deviceMAC returns the configured MAC, else the one of the configured or first usable interface.
func deviceMAC(c DeviceConfig) (string, error) {
	if c.MAC != "" {
		return c.MAC, nil // normalised when parsed
	}
	mac, err := device.DetectMAC(c.Interface)
	if err != nil {
		return "", fmt.Errorf("finding the device's MAC address (set device.mac or --mac): %w", err)
	}
	return mac, nil
}

// loadToken returns the bearer token: the content of server.token_file when set, else the
// DEVICECTL_TOKEN environment variable, else "" (no Authorization header). The token is never
// logged; only where it came from is.
func loadToken(c ServerConfig, getenv func(string) string, log *slog.Logger) (string, error) {
	if c.TokenFile == "" {
		return strings.TrimSpace(getenv(tokenEnv)), nil
	}
	if getenv(tokenEnv) != "" {
		log.Warn("both server.token_file and " + tokenEnv + " are set; using server.token_file")
	}
	return readSecret("server.token_file", c.TokenFile, log)
}

// readSecret reads the secret in the file path that the config key names: a token or API key.
// A file others can read is worth a warning, not a refusal: the device still has to work.
func readSecret(key, path string, log *slog.Logger) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", &ConfigError{Key: key, Err: err}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", &ConfigError{Key: key, Err: err}
	}
	if looseMode(fi.Mode()) {
		log.Warn("secret file is readable by group or others; chmod 600 it", "key", key, "file", path, "mode", fi.Mode().Perm().String())
	}
	// A secret is short; reading at most 64 KiB keeps a wrong path (a device node, a log) harmless.
	b, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return "", &ConfigError{Key: key, Err: err}
	}
	secret := strings.TrimSpace(string(b))
	if secret == "" {
		return "", &ConfigError{Key: key, Err: fmt.Errorf("%s is empty", path)}
	}
	return secret, nil
}

// looseMode reports whether a secret file's mode lets others than its owner read it.
func looseMode(m os.FileMode) bool { return m.Perm()&0o044 != 0 }

// tlsConfig returns the TLS settings for a wss:// server, nil for ws:// (TLS keys then do nothing,
// which is worth a warning).
func tlsConfig(c ServerConfig, log *slog.Logger) (*tls.Config, error) {
	opts := transport.TLSOptions{
		CAFile:             c.CAFile,
		CertFile:           c.CertFile,
		KeyFile:            c.KeyFile,
		ServerName:         c.ServerName,
		InsecureSkipVerify: c.InsecureSkipVerify,
	}
	if !strings.HasPrefix(c.URL, "wss://") {
		if opts != (transport.TLSOptions{}) {
			log.Warn("server.url is not wss://; the TLS settings are not used", "url", c.URL)
		}
		return nil, nil
	}
	conf, err := opts.Config()
	if err != nil {
		return nil, &ConfigError{Key: tlsErrorKey(opts), Err: err}
	}
	return conf, nil
}

// tlsErrorKey finds which key a TLSOptions.Config error is about: the CA file, else the client
// certificate pair. Only called on failure, so the good path reads each file once.
func tlsErrorKey(o transport.TLSOptions) string {
	if o.CAFile != "" {
		if _, err := (&transport.TLSOptions{CAFile: o.CAFile}).Config(); err != nil {
			return "server.ca_file"
		}
	}
	return "server.cert_file"
}

// stateDirs lists where the state may live, best first: the configured directory alone, else the
// system directory, then the user's ($XDG_STATE_HOME or ~/.local/state).
func stateDirs(c DeviceConfig, getenv func(string) string) []string {
	if c.StateDir != "" {
		return []string{c.StateDir}
	}
	dirs := []string{systemStateDir}
	if x := getenv("XDG_STATE_HOME"); x != "" {
		dirs = append(dirs, filepath.Join(x, "devicectl"))
	} else if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, ".local", "state", "devicectl"))
	}
	return dirs
}

// writableDir returns the first of dirs that exists or can be made, and can be written to.
func writableDir(dirs []string) (string, error) {
	var errs []error
	for _, dir := range dirs {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			errs = append(errs, err)
			continue
		}
		f, err := os.CreateTemp(dir, ".probe-*")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		f.Close()
		os.Remove(f.Name())
		return dir, nil
	}
	return "", fmt.Errorf("no writable state directory: %w", errors.Join(errs...))
}

// agentSettings are what the daemon knows besides its Config when it builds the agent.
type agentSettings struct {
	MAC, ClientID, Token string
	TLS                  *tls.Config
	Registry             *tools.Registry
	Render               func(device.AIMessage)
	Logger               *slog.Logger
	OnState              func(device.State)
	OnLineLost           func(error)
	OnCall               func(device.CallReport)
}

// agentOptions maps the configuration onto device.Options.
func agentOptions(c *Config, s agentSettings) *device.Options {
	return &device.Options{
		URL:      c.Server.URL,
		MAC:      s.MAC,
		ClientID: s.ClientID,
		Version:  buildVersion(),
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

// colorOn resolves render.color: auto means colour when w is a terminal.
func colorOn(mode string, w io.Writer) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	return isTerminal(w)
}

// isTerminal reports whether v is an *os.File open on a terminal. A character device is not
// enough: /dev/null is one, and a service started with its input there must not wait for a person.
func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && fdIsTerminal(f.Fd())
}
