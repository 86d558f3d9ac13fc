package config

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
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

// ToolSetsConfig lists the tools from elsewhere the device declares as its own.
type ToolSetsConfig struct {
	OpenTool []OpenToolSetConfig
	OpenAPI  []OpenAPISetConfig
	MCP      []MCPSetConfig
}

// OpenToolSetConfig is one OpenTool server whose functions become device tools.
type OpenToolSetConfig struct {
	URL        string            // the server's root, e.g. http://127.0.0.1:9627
	APIKeyFile string            // the key sent as Authorization: Bearer
	Functions  []string          // the functions to declare; empty: all
	SubType    string            // of every function not in SubTypes
	SubTypes   map[string]string // per function
	Prefix     string            // put before each function's name
	Timeout    time.Duration     // one call
	Refresh    time.Duration     // how often the function list is read again
	DropAfter  time.Duration     // unreachable this long: its tools are withdrawn
}

// OpenAPISetConfig is one OpenAPI document whose operations become device tools.
type OpenAPISetConfig struct {
	Spec            string            // file or http(s) URL
	BaseURL         string            // instead of the document's servers
	ServerVariables map[string]string // values of the servers' variables
	Operations      []string          // the tools to declare; empty: all
	SubTypes        map[string]string // per tool; else GET and HEAD are query, the rest control
	Prefix          string            // put before each tool's name
	BearerTokenFile string            // sent as Authorization: Bearer, where the operation's security asks
	APIKeyFile      string            // sent where the operation's security asks, as its apiKey scheme says
	APIKeyScheme    string            // the apiKey scheme APIKeyFile is for; empty: the document's only one
	APIKeyHeader    string            // a header for APIKeyFile when no scheme of the document describes it
	Timeout         time.Duration     // one call
}

// MCPSetConfig is one MCP server whose tools become device tools: a program devicectl starts
// (stdio) or a Streamable HTTP endpoint. Exactly one of Command and URL is set.
type MCPSetConfig struct {
	Name        string            // names the set in logs; the default prefix is Name + "_"
	Command     []string          // argv of a stdio server, run without a shell
	Env         map[string]string // added to a stdio server's environment
	URL         string            // a Streamable HTTP endpoint, e.g. http://127.0.0.1:3001/mcp
	TokenFile   string            // the token sent to URL as Authorization: Bearer
	Tools       []string          // the tools to declare, by the server's names; empty: all
	SubTypes    map[string]string // per tool (the server's name); else query
	Prefix      string            // put before each tool's name; empty: Name + "_"
	Timeout     time.Duration     // one call
	InitTimeout time.Duration     // starting, initialize and the first tools/list
}

// DefaultOpenToolSet is a toolsets.opentool item before its keys are read.
func DefaultOpenToolSet() OpenToolSetConfig {
	return OpenToolSetConfig{SubType: "query", SubTypes: map[string]string{}, Timeout: 10 * time.Second, Refresh: 30 * time.Second, DropAfter: 10 * time.Minute}
}

// DefaultOpenAPISet is a toolsets.openapi item before its keys are read.
func DefaultOpenAPISet() OpenAPISetConfig {
	return OpenAPISetConfig{ServerVariables: map[string]string{}, SubTypes: map[string]string{}, Timeout: 10 * time.Second}
}

// DefaultMCPSet is a toolsets.mcp item before its keys are read.
func DefaultMCPSet() MCPSetConfig {
	return MCPSetConfig{Env: map[string]string{}, SubTypes: map[string]string{}, Timeout: 30 * time.Second, InitTimeout: 10 * time.Second}
}

// toolSetSettings are the opentool and toolsets sections' keys, in the order of
// configs/devicectl.yaml.
func toolSetSettings() []setting {
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
		itemsKey("toolsets.opentool", "OpenTool servers whose functions the device declares as its own tools; calls are forwarded to them", func(c *Config) *[]OpenToolSetConfig { return &c.ToolSets.OpenTool }, DefaultOpenToolSet, checkOpenToolSet, []itemKey[*OpenToolSetConfig]{
			itemString("url", "the server's root, e.g. http://192.168.1.20:9627 (required)", func(s *OpenToolSetConfig) *string { return &s.URL }, checkHTTPURL),
			itemString("api_key_file", "file holding the API key sent as Authorization: Bearer", func(s *OpenToolSetConfig) *string { return &s.APIKeyFile }, nil),
			itemList("functions", "the functions to declare; empty: all the server lists", func(s *OpenToolSetConfig) *[]string { return &s.Functions }),
			itemString("sub_type", "sub_type of the functions not in sub_types: query (the server waits for the result) or control", func(s *OpenToolSetConfig) *string { return &s.SubType }, checkSubType),
			itemMap("sub_types", "sub_type per function, e.g. {turn_on: control}", func(s *OpenToolSetConfig) *map[string]string { return &s.SubTypes }, checkSubType),
			itemString("prefix", "put before each function's name, e.g. lights_ (the name stays within 64 characters)", func(s *OpenToolSetConfig) *string { return &s.Prefix }, nil),
			itemDuration("timeout", "one forwarded call", func(s *OpenToolSetConfig) *time.Duration { return &s.Timeout }),
			itemDuration("refresh", "how often the server's function list is read again (tools added or removed are registered again)", func(s *OpenToolSetConfig) *time.Duration { return &s.Refresh }),
			itemDuration("drop_after", "a server unreachable this long has its tools withdrawn until it is back", func(s *OpenToolSetConfig) *time.Duration { return &s.DropAfter }),
		}),
		openAPISetsKey(),
		mcpSetsKey(),
	}
}

// leftOutSetsKey reads a list of tool sets of a kind this build leaves out: one empty item per
// entry, which the daemon then refuses by name (left out of this build), without compiling the
// kind's keys into a binary that cannot use them.
func leftOutSetsKey[T any](key, usage string, list func(*Config) *[]T) setting {
	return setting{key: key, usage: usage, typ: "list",
		get: func(c *Config) string {
			if n := len(*list(c)); n > 0 {
				return fmt.Sprintf("(%d)", n)
			}
			return "[]"
		},
		setItems: func(c *Config, n *yaml.Node) error {
			if isNull(n) {
				return nil
			}
			if n.Kind != yaml.SequenceNode {
				return &Error{Key: key, Line: n.Line, Err: fmt.Errorf("want a list of mappings, one per tool set, got %s", describe(n))}
			}
			*list(c) = make([]T, len(n.Content))
			return nil
		},
	}
}

// checkToolSetName keeps a set's name usable as the start of a tool name.
func checkToolSetName(v string) (string, error) {
	for _, r := range v {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return "", fmt.Errorf("%q: use letters, digits, _ and - (it starts the tools' names)", v)
		}
	}
	return v, nil
}

func checkMCPSet(s *MCPSetConfig) (string, error) {
	switch {
	case s.Name == "":
		return "name", errors.New("missing (a short name such as everything; the tools are declared as NAME_tool)")
	case len(s.Command) == 0 && s.URL == "":
		return "command", errors.New("missing: set command (a stdio server's argv) or url (a Streamable HTTP server)")
	case len(s.Command) > 0 && s.URL != "":
		return "url", errors.New("set command or url, not both")
	case s.TokenFile != "" && s.URL == "":
		return "token_file", errors.New("set without url (a stdio server gets no token)")
	case len(s.Env) > 0 && s.URL != "":
		return "env", errors.New("set with url (only a stdio server, started by devicectl, gets an environment)")
	}
	if s.Prefix == "" {
		s.Prefix = s.Name + "_"
	}
	return "", nil
}

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

// LongestToolTimeout is the longest any tool may run by c: the longest of execution.tool_timeout,
// execution.tool_timeouts and the tool sets' timeouts, with the key that sets it (the first in
// key order among equals).
func (c *Config) LongestToolTimeout() (time.Duration, string) {
	longest, which := c.Execution.ToolTimeout, "execution.tool_timeout"
	for _, name := range slices.Sorted(maps.Keys(c.Execution.ToolTimeouts)) {
		if d := c.Execution.ToolTimeouts[name]; d > longest {
			longest, which = d, "execution.tool_timeouts."+name
		}
	}
	// Items are numbered from 1, as in the errors of their own keys.
	for i, s := range c.ToolSets.OpenTool {
		if s.Timeout > longest {
			longest, which = s.Timeout, fmt.Sprintf("toolsets.opentool[%d].timeout", i+1)
		}
	}
	for i, s := range c.ToolSets.OpenAPI {
		if s.Timeout > longest {
			longest, which = s.Timeout, fmt.Sprintf("toolsets.openapi[%d].timeout", i+1)
		}
	}
	for i, s := range c.ToolSets.MCP {
		if s.Timeout > longest {
			longest, which = s.Timeout, fmt.Sprintf("toolsets.mcp[%d].timeout", i+1)
		}
	}
	return longest, which
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

func checkHTTPURL(v string) (string, error) {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q is not an http:// or https:// URL", v)
	}
	return v, nil
}

func checkSubType(v string) (string, error) {
	if v != "query" && v != "control" {
		return "", fmt.Errorf("%q is not query or control", v)
	}
	return v, nil
}

func checkOpenToolSet(s *OpenToolSetConfig) (string, error) {
	if s.URL == "" {
		return "url", errors.New("missing (the OpenTool server's root, e.g. http://192.168.1.20:9627)")
	}
	return "", nil
}

func checkOpenAPISet(s *OpenAPISetConfig) (string, error) {
	switch {
	case s.Spec == "":
		return "spec", errors.New("missing (an OpenAPI file or URL)")
	case s.APIKeyHeader != "" && s.APIKeyFile == "":
		return "api_key_header", errors.New("set without api_key_file")
	case s.APIKeyScheme != "" && s.APIKeyFile == "":
		return "api_key_scheme", errors.New("set without api_key_file")
	case s.APIKeyScheme != "" && s.APIKeyHeader != "":
		return "api_key_header", errors.New("set with api_key_scheme: the scheme says where the key goes, set one")
	}
	return "", nil
}

// An itemKey is one key of the mappings in a list such as toolsets.opentool. Exactly one of set,
// setList and setEntry is non-nil, as for a setting. P is a pointer to the item's struct: every
// pointer has one shape, so each helper below is compiled once, with short symbol names, where a
// struct parameter made one copy per item type, named after the whole struct (tens of KiB of the
// board binary).
type itemKey[P any] struct {
	key, usage, typ string
	get             func(P) string
	set             func(P, string) error
	setList         func(P, []string) error
	setEntry        func(P, string, string) error
}

// itemRow is an item key as the README's table shows it.
type itemRow struct{ key, def, usage string }

// itemsKey is a list of mappings, each read with keys, starting from def and checked with check
// (which returns the key at fault). Errors name the item: toolsets.opentool[2].url.
func itemsKey[T any](key, usage string, list func(*Config) *[]T, def func() T, check func(*T) (string, error), keys []itemKey[*T]) setting {
	return setting{key: key, usage: usage, typ: "list",
		get: func(c *Config) string {
			if n := len(*list(c)); n > 0 {
				return fmt.Sprintf("(%d)", n)
			}
			return "[]"
		},
		setItems: func(c *Config, n *yaml.Node) error {
			if isNull(n) {
				return nil
			}
			if n.Kind != yaml.SequenceNode {
				return &Error{Key: key, Line: n.Line, Err: fmt.Errorf("want a list of mappings, one per tool set, got %s", describe(n))}
			}
			var items []T
			for i, it := range n.Content {
				it = resolveAlias(it)
				prefix := fmt.Sprintf("%s[%d]", key, i+1)
				if it.Kind != yaml.MappingNode {
					return &Error{Key: prefix, Line: it.Line, Err: fmt.Errorf("want a mapping, got %s", describe(it))}
				}
				item := def()
				if err := setItem(&item, it, prefix, keys); err != nil {
					return err
				}
				if k, err := check(&item); err != nil {
					return &Error{Key: prefix + "." + k, Line: it.Line, Err: err}
				}
				items = append(items, item)
			}
			*list(c) = items
			return nil
		},
		rows: func() []itemRow {
			d := def()
			rows := make([]itemRow, len(keys))
			for i, k := range keys {
				rows[i] = itemRow{key + "[]." + k.key, k.get(&d), k.usage}
			}
			return rows
		},
	}
}

func setItem[P any](item P, n *yaml.Node, prefix string, keys []itemKey[P]) error {
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], resolveAlias(n.Content[i+1])
		key := prefix + "." + k.Value
		if first, dup := seen[k.Value]; dup {
			return &Error{Key: key, Line: k.Line, Err: fmt.Errorf("duplicate key (first at line %d)", first)}
		}
		seen[k.Value] = k.Line
		j := slices.IndexFunc(keys, func(ik itemKey[P]) bool { return ik.key == k.Value })
		if j < 0 {
			names := make([]string, len(keys))
			for i, ik := range keys {
				names[i] = ik.key
			}
			return &Error{Key: key, Line: k.Line, Err: fmt.Errorf("unknown key (the keys are %s)", strings.Join(names, ", "))}
		}
		ik := keys[j]
		var err error
		switch {
		case isNull(v):
			continue
		case ik.setList != nil:
			if v.Kind != yaml.SequenceNode {
				return &Error{Key: key, Line: v.Line, Err: fmt.Errorf("want a list, got %s", describe(v))}
			}
			var vals []string
			for _, e := range v.Content {
				if e = resolveAlias(e); e.Kind != yaml.ScalarNode || isNull(e) {
					return &Error{Key: key, Line: e.Line, Err: fmt.Errorf("want a list of single values, got %s in it", describe(e))}
				}
				vals = append(vals, e.Value)
			}
			err = ik.setList(item, vals)
		case ik.setEntry != nil:
			if v.Kind != yaml.MappingNode {
				return &Error{Key: key, Line: v.Line, Err: fmt.Errorf("want name: value pairs, got %s", describe(v))}
			}
			for i := 0; i+1 < len(v.Content); i += 2 {
				ek, ev := v.Content[i], resolveAlias(v.Content[i+1])
				if ev.Kind != yaml.ScalarNode || isNull(ev) {
					return &Error{Key: key + "." + ek.Value, Line: ev.Line, Err: fmt.Errorf("want a single value, got %s", describe(ev))}
				}
				if err := ik.setEntry(item, ek.Value, ev.Value); err != nil {
					return &Error{Key: key + "." + ek.Value, Line: ev.Line, Err: err}
				}
			}
		default:
			if v.Kind != yaml.ScalarNode {
				return &Error{Key: key, Line: v.Line, Err: fmt.Errorf("want a single value, got %s", describe(v))}
			}
			err = ik.set(item, v.Value)
		}
		if err != nil {
			return &Error{Key: key, Line: v.Line, Err: err}
		}
	}
	return nil
}

func itemString[P any](key, usage string, p func(P) *string, check func(string) (string, error)) itemKey[P] {
	return itemKey[P]{key: key, usage: usage, typ: "string",
		get: func(t P) string { return *p(t) },
		set: func(t P, v string) error {
			if check != nil && v != "" {
				var err error
				if v, err = check(v); err != nil {
					return err
				}
			}
			*p(t) = v
			return nil
		},
	}
}

func itemDuration[P any](key, usage string, p func(P) *time.Duration) itemKey[P] {
	return itemKey[P]{key: key, usage: usage, typ: "duration",
		get: func(t P) string { return (*p(t)).String() },
		set: func(t P, v string) error {
			d, err := parseDuration(v)
			if err == nil {
				*p(t) = d
			}
			return err
		},
	}
}

func itemList[P any](key, usage string, p func(P) *[]string) itemKey[P] {
	return itemKey[P]{key: key, usage: usage, typ: "list",
		get: func(t P) string { return formatList(*p(t)) },
		setList: func(t P, items []string) error {
			for i, it := range items {
				if it == "" {
					return fmt.Errorf("item %d is empty", i+1)
				}
			}
			*p(t) = items
			return nil
		},
	}
}

func itemMap[P any](key, usage string, p func(P) *map[string]string, check func(string) (string, error)) itemKey[P] {
	return itemKey[P]{key: key, usage: usage, typ: "map",
		get: func(t P) string {
			m := *p(t)
			names := make([]string, 0, len(m))
			for n := range m {
				names = append(names, n)
			}
			slices.Sort(names)
			for i, n := range names {
				names[i] = n + ": " + m[n]
			}
			return "{" + strings.Join(names, ", ") + "}"
		},
		setEntry: func(t P, name, v string) error {
			if check != nil {
				var err error
				if v, err = check(v); err != nil {
					return err
				}
			}
			if *p(t) == nil {
				*p(t) = map[string]string{}
			}
			(*p(t))[name] = v
			return nil
		},
	}
}
