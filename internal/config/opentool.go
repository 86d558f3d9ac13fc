package config

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"
)

// OpenToolConfig is the device's own OpenTool server: its tools, served to clients on the
// device's side (other programs on the board, the LAN) over OpenTool's HTTP + JSON-RPC protocol.
type OpenToolConfig struct {
	Listen      string // host:port; empty: no server
	APIKeysFile string // one key per line; empty: no keys, loopback only
	// AllowedHosts are the other names (host or host:port) clients reach the server by, accepted
	// in Host and Origin besides the listen address; anything else is refused (DNS rebinding).
	AllowedHosts   []string
	CertFile       string        // PEM certificate: serve HTTPS (with KeyFile)
	KeyFile        string        // PEM private key of CertFile
	MaxConnections int           // open at once; more wait to be accepted
	ReadTimeout    time.Duration // a whole request, body included
	WriteTimeout   time.Duration // from a request's headers to the end of its answer
	IdleTimeout    time.Duration // a kept-alive connection with no request is closed after this
}

// DefaultOpenTool is the opentool section before the file is read.
func DefaultOpenTool() OpenToolConfig {
	return OpenToolConfig{MaxConnections: 64, ReadTimeout: 30 * time.Second, WriteTimeout: 2 * time.Minute, IdleTimeout: time.Minute}
}

// openToolSettings are the opentool section's keys, in the order of configs/devicectl.yaml.
func openToolSettings() []setting {
	return []setting{
		stringKey("opentool.listen", "", "serve the device's tools over OpenTool (HTTP + JSON-RPC) on this host:port, e.g. 127.0.0.1:9627; empty: off. Beyond loopback it needs opentool.api_keys_file", func(c *Config) *string { return &c.OpenTool.Listen }, checkListen("127.0.0.1:9627")),
		stringKey("opentool.api_keys_file", "", "file of API keys, one per line (# comments), that OpenTool clients send as Authorization: Bearer KEY", func(c *Config) *string { return &c.OpenTool.APIKeysFile }, nil),
		{
			key: "opentool.allowed_hosts", typ: "list",
			usage: "other names clients reach the server by: host (any port) or host:port, e.g. [board.lan]; Host and Origin must be the listen address (on loopback: 127.0.0.1, localhost, [::1]) or one of these",
			get:   func(c *Config) string { return formatList(c.OpenTool.AllowedHosts) },
			setList: func(c *Config, items []string) error {
				if err := checkAllowedHosts(items); err != nil {
					return err
				}
				c.OpenTool.AllowedHosts = slices.Clip(items)
				if len(items) == 0 {
					c.OpenTool.AllowedHosts = nil // [] and no value mean the same: unset
				}
				return nil
			},
		},
		stringKey("opentool.cert_file", "", "PEM certificate: serve HTTPS instead of HTTP (with opentool.key_file), so keys do not cross the LAN in clear", func(c *Config) *string { return &c.OpenTool.CertFile }, nil),
		stringKey("opentool.key_file", "", "PEM private key of opentool.cert_file", func(c *Config) *string { return &c.OpenTool.KeyFile }, nil),
		intKey("opentool.max_connections", "", "connections served at once; more wait to be accepted", func(c *Config) *int { return &c.OpenTool.MaxConnections }, 1, 65536),
		durationKey("opentool.read_timeout", "", "time allowed to read a whole request, body included (headers: at most 10s)", func(c *Config) *time.Duration { return &c.OpenTool.ReadTimeout }),
		durationKey("opentool.write_timeout", "", "time from a request's headers to the end of its answer; longer than any tool timeout, with room for calls that wait their turn", func(c *Config) *time.Duration { return &c.OpenTool.WriteTimeout }),
		durationKey("opentool.idle_timeout", "", "a kept-alive connection with no request is closed after this", func(c *Config) *time.Duration { return &c.OpenTool.IdleTimeout }),
	}
}

// check validates the opentool section as a whole; c is the config it belongs to, for the tool
// timeouts the write timeout must outlast.
func (o *OpenToolConfig) check(c *Config) error {
	if err := checkAllowedHosts(o.AllowedHosts); err != nil {
		return &Error{Key: "opentool.allowed_hosts", Err: err}
	}
	if (o.CertFile == "") != (o.KeyFile == "") {
		key := "opentool.cert_file"
		if o.CertFile != "" {
			key = "opentool.key_file"
		}
		return &Error{Key: key, Err: errors.New("missing: opentool.cert_file and opentool.key_file go together, set both or neither")}
	}
	if o.Listen == "" {
		return nil
	}
	// An answer cut by the write timeout reaches the client as a dropped connection, never as
	// the tool's timeout error: the server must wait longer than any tool may run.
	longest, which := c.LongestToolTimeout()
	if o.WriteTimeout <= longest {
		return &Error{Key: "opentool.write_timeout", Err: fmt.Errorf("%s is not longer than %s (%s): a call could be cut off before its answer", o.WriteTimeout, which, longest)}
	}
	return nil
}

// checkAllowedHosts checks opentool.allowed_hosts: each a bare host name or address, with an
// optional port, as a Host header carries it.
func checkAllowedHosts(hosts []string) error {
	for i, h := range hosts {
		if h == "" {
			return fmt.Errorf("item %d is empty", i+1)
		}
		if strings.ContainsAny(h, "/?#@ ") {
			return fmt.Errorf("%q is not a host or host:port (no scheme, path or user)", h)
		}
		if host, port, err := net.SplitHostPort(h); err == nil {
			if host == "" {
				return fmt.Errorf("%q: no host", h)
			}
			if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
				return fmt.Errorf("%q: port %q is not a number 1..65535", h, port)
			}
		} else if strings.Count(h, ":") == 1 {
			return fmt.Errorf("%q is not a host or host:port", h)
		}
	}
	return nil
}
