package config

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/devicectl/devicectl/protocol"
)

// Config is devicectl's configuration. Its shape is the YAML file's; the settings table below
// names every key and is the one place that parses, validates and documents them.
type Config struct {
	Server     ServerConfig
	Device     DeviceConfig
	Connection ConnectionConfig
	Execution  ExecutionConfig
	Render     RenderConfig
	Hardware   HardwareConfig
	Voice      VoiceConfig
	Hooks      HooksConfig
	OpenTool   OpenToolConfig
	ToolSets   ToolSetsConfig
	Control    ControlConfig
	// agentSections are the agent and llm sections (Agent, LLM): only builds that run the agent
	// server (serve, sim) have them; a board binary reads those sections as ignored.
	agentSections
	Log LogConfig
}

// ServerConfig says where the agent server is and how to trust it.
type ServerConfig struct {
	URL                string
	URLs               []string // several servers, tried in order (a cluster's nodes); not with URL
	TokenFile          string
	CAFile             string
	CertFile           string
	KeyFile            string
	ServerName         string
	InsecureSkipVerify bool
}

// DeviceConfig is the device's identity.
type DeviceConfig struct {
	MAC       string // normalised AA-BB-CC-DD-EE-FF; empty: detected
	Interface string // where to detect the MAC; empty: first up, non-loopback NIC
	StateDir  string // empty: /var/lib/devicectl when writable, else the user's state dir
	Language  string // "zh" or "en"
}

// ConnectionConfig tunes the line to the server and the reconnect loop.
type ConnectionConfig struct {
	PingInterval     time.Duration
	PingTimeout      time.Duration
	ReadLimit        int64
	HandshakeTimeout time.Duration
	RegisterTimeout  time.Duration
	BackoffMin       time.Duration
	BackoffMax       time.Duration
	BackoffReset     time.Duration
}

// ExecutionConfig bounds how the server's calls run.
type ExecutionConfig struct {
	MaxInFlight  int
	MaxQueued    int // calls waiting for a slot, in arrival order; more are answered -32002
	ToolTimeout  time.Duration
	DrainTimeout time.Duration
	ToolTimeouts map[string]time.Duration // per tool, overriding ToolTimeout
}

// RenderConfig says how mcp/ai/message replies are shown.
type RenderConfig struct {
	ShowThoughts bool
	Color        string // "auto", "always" or "never"
}

// LogConfig configures the slog logger on stderr.
type LogConfig struct {
	Level  slog.Level // from debug, info, warn, error
	Format string     // auto, human, text, json
}

// Defaults returns the configuration used when neither the file nor a flag says otherwise.
func Defaults() *Config {
	return &Config{
		Device: DeviceConfig{Language: "zh"},
		Connection: ConnectionConfig{
			PingInterval:     20 * time.Second,
			PingTimeout:      10 * time.Second,
			ReadLimit:        1 << 20,
			HandshakeTimeout: 10 * time.Second,
			RegisterTimeout:  10 * time.Second,
			BackoffMin:       500 * time.Millisecond,
			BackoffMax:       30 * time.Second,
			BackoffReset:     3 * time.Second,
		},
		Execution: ExecutionConfig{
			MaxInFlight:  8,
			MaxQueued:    256,
			ToolTimeout:  10 * time.Second,
			DrainTimeout: 5 * time.Second,
			ToolTimeouts: map[string]time.Duration{},
		},
		Render:        RenderConfig{Color: "auto"},
		Hardware:      defaultHardware(),
		Voice:         defaultVoice(),
		Hooks:         HooksConfig{Timeout: 10 * time.Second},
		OpenTool:      DefaultOpenTool(),
		agentSections: defaultAgentSections(),
		Log:           LogConfig{Level: slog.LevelInfo, Format: "auto"},
	}
}

// A setting is one key of the config file and, when flag is set, the command-line flag that
// overrides it. Values are parsed from their text form whether they come from YAML or a flag, so
// both are checked by the same code and reported the same way.
type setting struct {
	key   string // dotted path in the file, e.g. "connection.ping_interval"
	flag  string // flag name, or "" for keys only the file sets
	usage string // what it means, for --help and the README
	typ   string // value type shown in --help: string, bool, duration, size, int, map
	get   func(c *Config) string
	set   func(c *Config, v string) error // v is the text of the value; errors say what is wrong
	// setEntry, instead of set, takes a mapping: one call per entry (execution.tool_timeouts).
	setEntry func(c *Config, name, v string) error
	// setList, instead of set, takes a list of strings (a program's argv).
	setList func(c *Config, items []string) error
	// setItems, instead of set, takes a list of mappings (toolsets.opentool); rows lists the
	// keys of its mappings for the README.
	setItems func(c *Config, n *yaml.Node) error
	rows     func() []itemRow
	// choices returns the only values allowed, for --help, the README and shell completion;
	// nil: any of typ. It is called when a value is checked or documented, not when the table
	// is built: the drivers' names are those the program registered (hal/drivers), and a
	// package's init order does not put that first.
	choices func() []string
}

// settings lists every key, in the order of configs/devicectl.yaml and the README table.
var settings = slices.Concat(coreSettings, hardwareSettings(), voiceSettings(), hookSettings(), openToolSettings(), toolSetSettings(), controlSettings(), agentKeys(), logSettings)

var coreSettings = []setting{
	stringKey("server.url", "server", "agent server address, ws://host:port/path or wss://...", func(c *Config) *string { return &c.Server.URL }, checkServerURL),
	serverURLsKey(),
	stringKey("server.token_file", "", "file holding the bearer token (mode 0600); else the DEVICECTL_TOKEN environment variable", func(c *Config) *string { return &c.Server.TokenFile }, nil),
	stringKey("server.ca_file", "", "PEM CA bundle to verify the server with, instead of the system roots", func(c *Config) *string { return &c.Server.CAFile }, nil),
	stringKey("server.cert_file", "", "PEM client certificate for mutual TLS (with server.key_file)", func(c *Config) *string { return &c.Server.CertFile }, nil),
	stringKey("server.key_file", "", "PEM private key of server.cert_file", func(c *Config) *string { return &c.Server.KeyFile }, nil),
	stringKey("server.server_name", "", "name to verify the server certificate against, when not the URL's host", func(c *Config) *string { return &c.Server.ServerName }, nil),
	boolKey("server.insecure_skip_verify", "", "do not verify the server certificate (testing only; warns at every connect)", func(c *Config) *bool { return &c.Server.InsecureSkipVerify }),

	stringKey("device.mac", "mac", "MAC address sent in mcp/registerTools; empty: that of device.interface", func(c *Config) *string { return &c.Device.MAC }, checkMAC),
	stringKey("device.interface", "interface", "network interface to take the MAC from; empty: the first one up, not loopback, with a hardware address", func(c *Config) *string { return &c.Device.Interface }, nil),
	stringKey("device.state_dir", "state-dir", "directory of the persistent state: the device's Client-Id (run), agent.db (serve, sim, when agent.state_dir is empty); empty: /var/lib/devicectl when writable, else $XDG_STATE_HOME/devicectl or ~/.local/state/devicectl", func(c *Config) *string { return &c.Device.StateDir }, nil),
	enumKey("device.language", "language", "language of tool descriptions and results", func(c *Config) *string { return &c.Device.Language }, "zh", "en"),

	durationKey("connection.ping_interval", "ping-interval", "time between WebSocket keepalive pings", func(c *Config) *time.Duration { return &c.Connection.PingInterval }),
	durationKey("connection.ping_timeout", "", "no pong within this time: the line is dead, reconnect", func(c *Config) *time.Duration { return &c.Connection.PingTimeout }),
	sizeKey("connection.read_limit", "", "largest message accepted (bytes, or with KiB/MiB/GiB); larger closes the line", func(c *Config) *int64 { return &c.Connection.ReadLimit }),
	durationKey("connection.handshake_timeout", "", "time allowed for the WebSocket (and TLS) handshake", func(c *Config) *time.Duration { return &c.Connection.HandshakeTimeout }),
	durationKey("connection.register_timeout", "", "time allowed for the server to answer mcp/registerTools", func(c *Config) *time.Duration { return &c.Connection.RegisterTimeout }),
	durationKey("connection.backoff_min", "", "first wait before reconnecting (exponential, full jitter)", func(c *Config) *time.Duration { return &c.Connection.BackoffMin }),
	durationKey("connection.backoff_max", "", "longest wait before reconnecting", func(c *Config) *time.Duration { return &c.Connection.BackoffMax }),
	durationKey("connection.backoff_reset", "", "a line registered this long (or that answered a call) starts the next back-off from backoff_min", func(c *Config) *time.Duration { return &c.Connection.BackoffReset }),

	intKey("execution.max_in_flight", "", "tool calls running at once; more wait in arrival order (execution.max_queued)", func(c *Config) *int { return &c.Execution.MaxInFlight }, 1, 1024),
	intKey("execution.max_queued", "", "tool calls waiting for one running to finish; more are answered -32002 device busy", func(c *Config) *int { return &c.Execution.MaxQueued }, 0, 65536),
	durationKey("execution.tool_timeout", "", "a call running longer is answered -32001", func(c *Config) *time.Duration { return &c.Execution.ToolTimeout }),
	durationKey("execution.drain_timeout", "", "on stop, how long running calls may finish", func(c *Config) *time.Duration { return &c.Execution.DrainTimeout }),
	{
		key: "execution.tool_timeouts", usage: "per-tool timeouts of the device's own tools, overriding execution.tool_timeout, e.g. {get_device_status: 2s} (a tool set has its own timeout)", typ: "map",
		get: func(c *Config) string { return formatDurationMap(c.Execution.ToolTimeouts) },
		setEntry: func(c *Config, name, v string) error {
			if err := checkToolName(name); err != nil {
				return err
			}
			d, err := parseDuration(v)
			if err != nil {
				return err
			}
			if c.Execution.ToolTimeouts == nil {
				c.Execution.ToolTimeouts = map[string]time.Duration{}
			}
			c.Execution.ToolTimeouts[name] = d
			return nil
		},
	},

	boolKey("render.show_thoughts", "show-thoughts", "show the model's \"thought\" messages, dimmed, on stderr", func(c *Config) *bool { return &c.Render.ShowThoughts }),
	enumKey("render.color", "color", "colour codes on stderr; auto: when stderr is a terminal", func(c *Config) *string { return &c.Render.Color }, "auto", "always", "never"),
}

var logSettings = []setting{
	levelKey("log.level", "log-level", "log level", func(c *Config) *slog.Level { return &c.Log.Level }),
	enumKey("log.format", "log-format", "log format on stderr; auto: human on a terminal, text (with journald priorities, no time) in the systemd journal, text elsewhere", func(c *Config) *string { return &c.Log.Format }, "auto", "human", "text", "json"),
}

func stringKey(key, flag, usage string, p func(*Config) *string, check func(string) (string, error)) setting {
	return setting{key: key, flag: flag, usage: usage, typ: "string",
		get: func(c *Config) string { return *p(c) },
		set: func(c *Config, v string) error {
			if check != nil && v != "" {
				var err error
				if v, err = check(v); err != nil {
					return err
				}
			}
			*p(c) = v
			return nil
		},
	}
}

// enumKey is a string that is one of choices.
func enumKey(key, flag, usage string, p func(*Config) *string, choices ...string) setting {
	return oneOfKey(key, flag, usage, p, func() []string { return choices })
}

// oneOfKey is a string that is one of what choices returns when the value is checked.
func oneOfKey(key, flag, usage string, p func(*Config) *string, choices func() []string) setting {
	s := stringKey(key, flag, usage, p, func(v string) (string, error) {
		if cs := choices(); !slices.Contains(cs, v) {
			return "", fmt.Errorf("%q is not one of %s", v, strings.Join(cs, ", "))
		}
		return v, nil
	})
	set := s.set
	s.set = func(c *Config, v string) error {
		if v == "" {
			return fmt.Errorf("empty; want one of %s", strings.Join(choices(), ", "))
		}
		return set(c, v)
	}
	s.choices = choices
	return s
}

// help is the key's usage for --help and the README, with its choices as they are now.
func (s *setting) help() string {
	if s.choices == nil {
		return s.usage
	}
	return s.usage + " (" + strings.Join(s.choices(), ", ") + ")"
}

// levelKey is a log level, parsed into an slog.Level once, here.
func levelKey(key, flag, usage string, p func(*Config) *slog.Level) setting {
	levels := []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError}
	names := make([]string, len(levels))
	for i, l := range levels {
		names[i] = strings.ToLower(l.String())
	}
	return setting{key: key, flag: flag, usage: usage, typ: "string", choices: func() []string { return names },
		get: func(c *Config) string { return strings.ToLower(p(c).String()) },
		set: func(c *Config, v string) error {
			i := slices.Index(names, v)
			if i < 0 {
				return fmt.Errorf("%q is not one of %s", v, strings.Join(names, ", "))
			}
			*p(c) = levels[i]
			return nil
		},
	}
}

func boolKey(key, flag, usage string, p func(*Config) *bool) setting {
	return setting{key: key, flag: flag, usage: usage, typ: "bool",
		get: func(c *Config) string { return strconv.FormatBool(*p(c)) },
		set: func(c *Config, v string) error {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("%q is not true or false", v)
			}
			*p(c) = b
			return nil
		},
	}
}

func durationKey(key, flag, usage string, p func(*Config) *time.Duration) setting {
	return setting{key: key, flag: flag, usage: usage, typ: "duration",
		get: func(c *Config) string { return (*p(c)).String() },
		set: func(c *Config, v string) error {
			d, err := parseDuration(v)
			if err != nil {
				return err
			}
			*p(c) = d
			return nil
		},
	}
}

func sizeKey(key, flag, usage string, p func(*Config) *int64) setting {
	return setting{key: key, flag: flag, usage: usage, typ: "size",
		get: func(c *Config) string { return formatSize(*p(c)) },
		set: func(c *Config, v string) error {
			n, err := parseSize(v)
			if err != nil {
				return err
			}
			*p(c) = n
			return nil
		},
	}
}

func intKey(key, flag, usage string, p func(*Config) *int, lo, hi int) setting {
	return setting{key: key, flag: flag, usage: usage, typ: "int",
		get: func(c *Config) string { return strconv.Itoa(*p(c)) },
		set: func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("%q is not a whole number", v)
			}
			if n < lo || n > hi {
				return fmt.Errorf("%d is out of range %d..%d", n, lo, hi)
			}
			*p(c) = n
			return nil
		},
	}
}

func parseDuration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (e.g. 500ms, 20s, 1m30s)", v)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q must be positive", v)
	}
	return d, nil
}

func formatDurationMap(m map[string]time.Duration) string {
	if len(m) == 0 {
		return "{}"
	}
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + ": " + m[n].String()
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// Read limits are bounded: below 1 KiB not even a registration answer fits; above 1 GiB one
// message could exhaust a small board's memory.
const (
	minReadLimit = 1 << 10
	maxReadLimit = 1 << 30
)

var sizeUnits = []struct {
	suffix string
	factor int64
}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}, {"", 1}}

// parseSize reads a byte count: a whole number, optionally followed by B, KiB, MiB or GiB.
func parseSize(v string) (int64, error) {
	s := strings.TrimSpace(v)
	for _, u := range sizeUnits {
		num, ok := strings.CutSuffix(s, u.suffix)
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
		if err != nil {
			break
		}
		if n > maxReadLimit/u.factor || n*u.factor < minReadLimit {
			return 0, fmt.Errorf("%s is out of range 1KiB..1GiB", v)
		}
		return n * u.factor, nil
	}
	return 0, fmt.Errorf("%q is not a size (a number of bytes, or e.g. 512KiB, 1MiB)", v)
}

// formatSize writes n in the largest unit that divides it exactly.
func formatSize(n int64) string {
	for _, u := range sizeUnits[:3] {
		if n != 0 && n%u.factor == 0 {
			return strconv.FormatInt(n/u.factor, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// serverURLsKey is server.urls: a list in the file; on the command line (--servers) the URLs
// separated by commas. Each is checked as server.url is, and named by its place in the list.
func serverURLsKey() setting {
	set := func(c *Config, items []string) error {
		for i, it := range items {
			if _, err := checkServerURL(it); err != nil {
				return fmt.Errorf("item %d: %w", i+1, err)
			}
		}
		if len(items) == 0 {
			items = nil
		}
		c.Server.URLs = items
		return nil
	}
	return setting{key: "server.urls", flag: "servers", typ: "list",
		usage: "several agent servers (the nodes of a cluster), tried in order: the device moves on to the next when one is down, refuses it or loses its line, with the back-off of connection.backoff_*; --servers takes them separated by commas. Not with server.url",
		// The text form, the flag's: the URLs separated by commas.
		get: func(c *Config) string { return strings.Join(c.Server.URLs, ",") },
		set: func(c *Config, v string) error {
			items := strings.Split(v, ",")
			for i := range items {
				items[i] = strings.TrimSpace(items[i])
			}
			return set(c, items)
		},
		setList: set,
	}
}

// Servers are the agent servers a device dials, in order: server.urls, else server.url alone;
// none when neither is set.
func (s ServerConfig) Servers() []string {
	if len(s.URLs) > 0 {
		return s.URLs
	}
	if s.URL != "" {
		return []string{s.URL}
	}
	return nil
}

func checkServerURL(v string) (string, error) {
	u, err := url.Parse(v)
	if err != nil {
		return "", fmt.Errorf("%q is not a URL", v)
	}
	if u.Scheme != "ws" && u.Scheme != "wss" {
		return "", fmt.Errorf("%q: want a ws:// or wss:// URL", v)
	}
	if u.Host == "" {
		return "", fmt.Errorf("%q: no host", v)
	}
	return v, nil
}

// checkMAC normalises a MAC; its error says what is wrong with it.
func checkMAC(v string) (string, error) { return protocol.ParseMAC(v) }

// checkListen returns the check of a host:port key whose errors show example, the key's own
// default port, so that a mistake in one server's address is not answered with another's.
func checkListen(example string) func(string) (string, error) {
	return func(v string) (string, error) {
		_, port, err := net.SplitHostPort(v)
		if err != nil {
			return "", fmt.Errorf("%q is not host:port (e.g. %s)", v, example)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
			return "", fmt.Errorf("%q: port %q is not a number 0..65535", v, port)
		}
		return v, nil
	}
}

// isLoopback reports whether host:port only listens on this machine: an empty host or 0.0.0.0
// listens everywhere, and a name other than localhost may resolve to anything.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func checkHTTPURL(v string) (string, error) {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q is not an http:// or https:// URL", v)
	}
	return v, nil
}

// Check validates what no single key can: relations between keys. Resolve calls it.
func (c *Config) Check() error {
	if c.Connection.BackoffMin > c.Connection.BackoffMax {
		return &Error{Key: "connection.backoff_min", Err: fmt.Errorf("%s is greater than connection.backoff_max (%s)", c.Connection.BackoffMin, c.Connection.BackoffMax)}
	}
	if c.OpenTool.Listen != "" && c.OpenTool.APIKeysFile == "" && !isLoopback(c.OpenTool.Listen) {
		return &Error{Key: "opentool.listen", Err: fmt.Errorf("%s is reachable beyond this machine, and opentool.api_keys_file is not set: set it, or listen on 127.0.0.1", c.OpenTool.Listen)}
	}
	if err := c.OpenTool.check(c); err != nil {
		return err
	}
	if c.Server.URL != "" && len(c.Server.URLs) > 0 {
		return &Error{Key: "server.urls", Err: errors.New("server.url and server.urls are both set: give one server as server.url (--server), or several as server.urls (--servers)")}
	}
	if (c.Server.CertFile == "") != (c.Server.KeyFile == "") {
		return &Error{Key: "server.cert_file", Err: errors.New("server.cert_file and server.key_file go together: set both or neither")}
	}
	if err := c.Hardware.check(); err != nil {
		return err
	}
	return c.checkVoice()
}

// Resolve returns the configuration of a command that reads the config file: defaults,
// overlaid with the file (path, or DefaultPath when it exists), overlaid with the flags set
// on fs (nil: none), checked as a whole.
func Resolve(path string, fs *pflag.FlagSet) (*Config, error) {
	c, err := Load(path)
	if err != nil {
		return nil, err
	}
	if err := ApplyFlags(fs, c); err != nil {
		return nil, err
	}
	if err := c.Check(); err != nil {
		return nil, err
	}
	return c, nil
}
