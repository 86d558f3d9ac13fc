package config

import (
	"errors"
	"fmt"
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
}

// ToolSetsConfig lists the tools from elsewhere the device declares as its own.
type ToolSetsConfig struct {
	OpenTool []OpenToolSetConfig
	OpenAPI  []OpenAPISetConfig
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

// DefaultOpenToolSet is a toolsets.opentool item before its keys are read.
func DefaultOpenToolSet() OpenToolSetConfig {
	return OpenToolSetConfig{SubType: "query", SubTypes: map[string]string{}, Timeout: 10 * time.Second, Refresh: 30 * time.Second, DropAfter: 10 * time.Minute}
}

// DefaultOpenAPISet is a toolsets.openapi item before its keys are read.
func DefaultOpenAPISet() OpenAPISetConfig {
	return OpenAPISetConfig{ServerVariables: map[string]string{}, SubTypes: map[string]string{}, Timeout: 10 * time.Second}
}

// toolSetSettings are the opentool and toolsets sections' keys, in the order of
// configs/devicectl.yaml.
func toolSetSettings() []setting {
	return []setting{
		stringKey("opentool.listen", "", "serve the device's tools over OpenTool (HTTP + JSON-RPC) on this host:port, e.g. 127.0.0.1:9627; empty: off. Beyond loopback it needs opentool.api_keys_file", func(c *Config) *string { return &c.OpenTool.Listen }, checkListen),
		stringKey("opentool.api_keys_file", "", "file of API keys, one per line (# comments), that OpenTool clients send as Authorization: Bearer KEY", func(c *Config) *string { return &c.OpenTool.APIKeysFile }, nil),
		itemsKey("toolsets.opentool", "OpenTool servers whose functions the device declares as its own tools; calls are forwarded to them", func(c *Config) *[]OpenToolSetConfig { return &c.ToolSets.OpenTool }, DefaultOpenToolSet, checkOpenToolSet, []itemKey[OpenToolSetConfig]{
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
		itemsKey("toolsets.openapi", "OpenAPI 3.0/3.1 documents whose operations the device declares as its own tools; calls become HTTP requests", func(c *Config) *[]OpenAPISetConfig { return &c.ToolSets.OpenAPI }, DefaultOpenAPISet, checkOpenAPISet, []itemKey[OpenAPISetConfig]{
			itemString("spec", "the document: a file, or an http(s) URL (required)", func(s *OpenAPISetConfig) *string { return &s.Spec }, nil),
			itemString("base_url", "send requests here instead of the document's servers", func(s *OpenAPISetConfig) *string { return &s.BaseURL }, checkHTTPURL),
			itemMap("server_variables", "values of the servers' {variables}, e.g. {port: \"8443\"}", func(s *OpenAPISetConfig) *map[string]string { return &s.ServerVariables }, nil),
			itemList("operations", "the tools to declare, by name; empty: all", func(s *OpenAPISetConfig) *[]string { return &s.Operations }),
			itemMap("sub_types", "sub_type per tool; else GET and HEAD are query, the rest control", func(s *OpenAPISetConfig) *map[string]string { return &s.SubTypes }, checkSubType),
			itemString("prefix", "put before each tool's name", func(s *OpenAPISetConfig) *string { return &s.Prefix }, nil),
			itemString("bearer_token_file", "file holding a token sent as Authorization: Bearer to the operations whose security asks for http bearer, oauth2 or openIdConnect", func(s *OpenAPISetConfig) *string { return &s.BearerTokenFile }, nil),
			itemString("api_key_file", "file holding an API key sent, in the header, query or cookie its apiKey scheme names, to the operations whose security asks for it (with bearer_token_file too, if need be)", func(s *OpenAPISetConfig) *string { return &s.APIKeyFile }, nil),
			itemString("api_key_scheme", "the document's apiKey security scheme api_key_file is for; empty: its only one", func(s *OpenAPISetConfig) *string { return &s.APIKeyScheme }, nil),
			itemString("api_key_header", "send api_key_file in this header with every call instead, for a document whose schemes do not describe the key", func(s *OpenAPISetConfig) *string { return &s.APIKeyHeader }, nil),
			itemDuration("timeout", "one call", func(s *OpenAPISetConfig) *time.Duration { return &s.Timeout }),
		}),
	}
}

func checkListen(v string) (string, error) {
	_, port, err := net.SplitHostPort(v)
	if err != nil {
		return "", fmt.Errorf("%q is not host:port (e.g. 127.0.0.1:9627)", v)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "", fmt.Errorf("%q: port %q is not a number 0..65535", v, port)
	}
	return v, nil
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
// setList and setEntry is non-nil, as for a setting.
type itemKey[T any] struct {
	key, usage, typ string
	get             func(*T) string
	set             func(*T, string) error
	setList         func(*T, []string) error
	setEntry        func(*T, string, string) error
}

// itemRow is an item key as the README's table shows it.
type itemRow struct{ key, def, usage string }

// itemsKey is a list of mappings, each read with keys, starting from def and checked with check
// (which returns the key at fault). Errors name the item: toolsets.opentool[2].url.
func itemsKey[T any](key, usage string, list func(*Config) *[]T, def func() T, check func(*T) (string, error), keys []itemKey[T]) setting {
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

func setItem[T any](item *T, n *yaml.Node, prefix string, keys []itemKey[T]) error {
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], resolveAlias(n.Content[i+1])
		key := prefix + "." + k.Value
		if first, dup := seen[k.Value]; dup {
			return &Error{Key: key, Line: k.Line, Err: fmt.Errorf("duplicate key (first at line %d)", first)}
		}
		seen[k.Value] = k.Line
		j := slices.IndexFunc(keys, func(ik itemKey[T]) bool { return ik.key == k.Value })
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

func itemString[T any](key, usage string, p func(*T) *string, check func(string) (string, error)) itemKey[T] {
	return itemKey[T]{key: key, usage: usage, typ: "string",
		get: func(t *T) string { return *p(t) },
		set: func(t *T, v string) error {
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

func itemDuration[T any](key, usage string, p func(*T) *time.Duration) itemKey[T] {
	return itemKey[T]{key: key, usage: usage, typ: "duration",
		get: func(t *T) string { return (*p(t)).String() },
		set: func(t *T, v string) error {
			d, err := parseDuration(v)
			if err == nil {
				*p(t) = d
			}
			return err
		},
	}
}

func itemList[T any](key, usage string, p func(*T) *[]string) itemKey[T] {
	return itemKey[T]{key: key, usage: usage, typ: "list",
		get: func(t *T) string { return formatList(*p(t)) },
		setList: func(t *T, items []string) error {
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

func itemMap[T any](key, usage string, p func(*T) *map[string]string, check func(string) (string, error)) itemKey[T] {
	return itemKey[T]{key: key, usage: usage, typ: "map",
		get: func(t *T) string {
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
		setEntry: func(t *T, name, v string) error {
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
