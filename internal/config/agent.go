package config

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// AgentConfig is the agent server that `devicectl serve` runs and `devicectl sim` runs in process:
// where it listens, how it plans, how it treats devices' control tools, where it keeps its
// database and which credentials it asks for. A device (`devicectl run`) ignores it.
type AgentConfig struct {
	Listen           string        // host:port of the hub, the A2A routes and the seed's routes
	Planner          string        // "rules" (built in) or "llm" (the llm section)
	TurnTimeout      time.Duration // one turn, from what was said to the final reply
	WaitForControl   bool          // false: a control tool answers the model "success" at once
	StateDir         string        // where agent.db lives; empty: as device.state_dir resolves
	TokenFile        string        // bearer token of the HTTP API; empty: open (loopback only)
	DeviceTokensFile string        // tokens a device may register with, one a line; empty: any
	Web              bool          // serve the web page (agent/web) at http://ADDR/
	Search           SearchConfig
	STT              STTConfig
	// DeviceAliases names devices in the MCP server's tool names (ALIAS__amplify_volume), by
	// MAC as the protocol writes it; a device without one is named by its MAC.
	DeviceAliases map[string]string
	// PublicURL is the base URL clients reach the server at (behind a proxy, its public name);
	// the agent cards advertise it. Empty: http:// and the listen address.
	PublicURL string
	// AllowedHosts are Host names the server answers to beyond its own (listen address,
	// loopback names, PublicURL's host): a request naming any other is refused (DNS rebinding).
	AllowedHosts []string
	// AllowedOrigins are the browser origins (scheme://host[:port]) allowed to call the server
	// cross-origin; CORS answers for them. Any other foreign Origin is refused.
	AllowedOrigins []string
	// DevicesOpen lets any device register on a non-loopback listen address without
	// DeviceTokensFile. Off by default: serve refuses to start that way.
	DevicesOpen bool
	Tasks       TasksConfig
	Limits      LimitsConfig
	// Timezone is the IANA zone reminders are set and said in ("" is the machine's own).
	Timezone  string
	Reminders RemindersConfig
}

// RemindersConfig says how reminders reach devices that were away.
type RemindersConfig struct {
	// Grace is how long after its time a reminder still reaches a device that comes back; past
	// it the reminder is missed, and told at the device's next turn.
	Grace time.Duration
}

// Location is agent.timezone's zone: the machine's when it is empty.
func (a AgentConfig) Location() *time.Location {
	if a.Timezone == "" {
		return time.Local
	}
	loc, err := time.LoadLocation(a.Timezone)
	if err != nil {
		return time.Local // checkTimezone refused it already
	}
	return loc
}

// checkTimezone accepts an IANA zone name Go can load.
func checkTimezone(v string) (string, error) {
	if _, err := time.LoadLocation(v); err != nil || v == "Local" {
		return "", fmt.Errorf("%q is not an IANA time zone name, e.g. Asia/Shanghai or Europe/Berlin", v)
	}
	return v, nil
}

// TasksConfig says how many A2A and seed tasks the server keeps.
type TasksConfig struct {
	KeepAge   time.Duration // a finished task older than this is deleted
	KeepCount int           // past this many tasks, the oldest finished ones are deleted
}

// LimitsConfig bounds what any peer, authenticated or not, can make the server hold. A limit
// reached is a clear error (HTTP 413/429/503, JSON-RPC with data.details) and a log line.
type LimitsConfig struct {
	Connections           int           // open TCP connections in all
	ConnectionsPerAddress int           // open TCP connections from one IP address
	HeaderTimeout         time.Duration // to read a request's header
	BodyTimeout           time.Duration // to read a request's body (after its header)
	IdleTimeout           time.Duration // a kept-alive connection with no request is closed
	WriteTimeout          time.Duration // one write to a client (a stream's each write too)
	RequestBytes          int64         // an HTTP request body
	MessageBytes          int64         // the text of one message to the agent
	TaskHistory           int           // messages kept in one task's history
	ToolsPerDevice        int           // tools one device may register
	SchemaBytes           int64         // one device's tool declarations, as JSON
	MCPSessions           int           // open MCP sessions
	MCPSessionIdle        time.Duration // an MCP session unused this long is closed
	Turns                 int           // turns running at once, all front doors together
	WebCallBytes          int64         // what the web page keeps of one call's input or result
	WebCalls              int           // calls the web page keeps per device
}

// SearchConfig is the backend of the search_web tool.
type SearchConfig struct {
	SearXNGURL string // a SearXNG instance's root; its JSON API must be enabled
}

// STTConfig is the agent server's speech to text, for the audio devices send (mcp/user/audio).
type STTConfig struct {
	Engine     string   // STTEngineAuto, STTEngineCommand, STTEngineOpenAI or STTEngineNone
	Command    []string // STTEngineCommand: argv; {wav} and {jsgf} are replaced (agent/stt)
	BaseURL    string   // STTEngineOpenAI: the endpoint's base URL, e.g. http://127.0.0.1:8080/v1
	Model      string   // STTEngineOpenAI: e.g. whisper-1
	APIKeyFile string   // STTEngineOpenAI: file holding the key; empty: none
}

// agent.stt.engine's values.
const (
	STTEngineAuto    = "auto" // pocketsphinx_continuous with a grammar when it is on PATH, else none
	STTEngineCommand = "command"
	STTEngineOpenAI  = "openai"
	STTEngineNone    = "none"
)

// LLMConfig is the OpenAI-compatible endpoint of the llm planner.
type LLMConfig struct {
	BaseURL    string // e.g. http://127.0.0.1:11434/v1 (Ollama)
	Model      string
	APIKeyFile string // empty: no key (local servers)
}

// Planners are agent.planner's values.
const (
	PlannerRules = "rules"
	PlannerLLM   = "llm"
)

// DefaultAgentListen keeps the agent server on this machine unless asked: without a token it
// lets anyone who reaches it drive the devices.
const DefaultAgentListen = "127.0.0.1:8765"

// agentDBName is the agent's database in its state directory.
const agentDBName = "agent.db"

func defaultAgent() AgentConfig {
	return AgentConfig{
		Listen: DefaultAgentListen, Planner: PlannerRules, TurnTimeout: 60 * time.Second,
		STT:       STTConfig{Engine: STTEngineAuto},
		Tasks:     TasksConfig{KeepAge: 30 * 24 * time.Hour, KeepCount: 10000},
		Reminders: RemindersConfig{Grace: 10 * time.Minute},
		Limits: LimitsConfig{
			Connections:           20000,
			ConnectionsPerAddress: 20000,
			HeaderTimeout:         10 * time.Second,
			BodyTimeout:           30 * time.Second,
			IdleTimeout:           2 * time.Minute,
			WriteTimeout:          30 * time.Second,
			RequestBytes:          1 << 20,
			MessageBytes:          64 << 10,
			TaskHistory:           200,
			ToolsPerDevice:        128,
			SchemaBytes:           256 << 10,
			MCPSessions:           256,
			MCPSessionIdle:        10 * time.Minute,
			Turns:                 256,
			WebCallBytes:          4 << 10,
			WebCalls:              100,
		},
	}
}

// agentSettings are the agent and llm sections' keys, in the order of configs/devicectl.yaml.
func agentSettings() []setting {
	return []setting{
		stringKey("agent.listen", "listen", "serve: the agent server's address, host:port; devices dial ws://ADDR/ (any path), A2A and the seed's routes are on http://ADDR/. Beyond loopback it needs agent.token_file", func(c *Config) *string { return &c.Agent.Listen }, checkListen(DefaultAgentListen)),
		enumKey("agent.planner", "planner", "serve, sim: who decides what a turn does: rules, the built-in rule planner (no network, no model), or llm, the OpenAI-compatible endpoint of the llm section", func(c *Config) *string { return &c.Agent.Planner }, PlannerRules, PlannerLLM),
		durationKey("agent.turn_timeout", "turn-timeout", "serve, sim: one turn's deadline, from what was said to the final reply", func(c *Config) *time.Duration { return &c.Agent.TurnTimeout }),
		boolKey("agent.wait_for_control", "", "serve, sim: wait for the device's answer to a control tool (false: answer the planner \"success\" at once, as seed 002 says)", func(c *Config) *bool { return &c.Agent.WaitForControl }),
		stringKey("agent.state_dir", "", "serve: directory of agent.db (memories, tasks); empty: as device.state_dir", func(c *Config) *string { return &c.Agent.StateDir }, nil),
		stringKey("agent.token_file", "", "serve: file holding the bearer token HTTP clients (A2A, the seed's routes) must send; empty: none, allowed on loopback only", func(c *Config) *string { return &c.Agent.TokenFile }, nil),
		stringKey("agent.device_tokens_file", "", "serve: file of device tokens, one per line (# comments); a device registers only with one of them as its bearer token; empty: any device", func(c *Config) *string { return &c.Agent.DeviceTokensFile }, nil),
		deviceAliasesKey(),
		stringKey("agent.public_url", "", "serve: the base URL clients reach this server at (behind a reverse proxy, its public name); the agent cards advertise it and its host is allowed; empty: http://agent.listen", func(c *Config) *string { return &c.Agent.PublicURL }, checkHTTPURL),
		listKey("agent.allowed_hosts", "serve: Host names the server answers to besides its listen address, loopback names and agent.public_url's host; any other is refused (DNS rebinding)", func(c *Config) *[]string { return &c.Agent.AllowedHosts }),
		listKey("agent.allowed_origins", "serve: browser origins (scheme://host[:port]) allowed to call the API cross-origin, answered with CORS; any other foreign Origin is refused", func(c *Config) *[]string { return &c.Agent.AllowedOrigins }),
		boolKey("agent.devices_open", "", "serve: let any device register on a non-loopback agent.listen without agent.device_tokens_file (off: serve refuses to start so)", func(c *Config) *bool { return &c.Agent.DevicesOpen }),
		boolKey("agent.web", "web", "serve: serve the web page (faces, volume, conversation, tool log) at http://ADDR/, with agent.token_file's credentials", func(c *Config) *bool { return &c.Agent.Web }),
		stringKey("agent.search.searxng_url", "searxng-url", "serve, sim: the SearXNG instance search_web asks (its JSON API enabled), e.g. http://127.0.0.1:8888; empty: search_web answers that no backend is configured", func(c *Config) *string { return &c.Agent.Search.SearXNGURL }, checkHTTPURL),
		stringKey("agent.timezone", "", "serve, sim: the IANA time zone reminders are set and said in, e.g. Asia/Shanghai; empty: the machine's", func(c *Config) *string { return &c.Agent.Timezone }, checkTimezone),
		durationKey("agent.reminders.grace", "", "serve, sim: how long after its time a reminder still reaches a device that comes back; past it the reminder is missed and told at the device's next turn", func(c *Config) *time.Duration { return &c.Agent.Reminders.Grace }),
		enumKey("agent.stt.engine", "stt", "serve, sim: speech to text for the audio devices send: auto (pocketsphinx_continuous with a grammar of what the planner understands, when it is on PATH; else none), command (agent.stt.command), openai (an OpenAI-compatible /v1/audio/transcriptions at agent.stt.base_url), none (audio is refused)", func(c *Config) *string { return &c.Agent.STT.Engine }, STTEngineAuto, STTEngineCommand, STTEngineOpenAI, STTEngineNone),
		listKey("agent.stt.command", "agent.stt.engine command: a program and its arguments that reads a WAV (on stdin, or the file {wav} names) and prints the text; {jsgf} is a JSGF grammar of what the planner understands", func(c *Config) *[]string { return &c.Agent.STT.Command }),
		stringKey("agent.stt.base_url", "", "agent.stt.engine openai: the API's base URL, e.g. http://127.0.0.1:8080/v1 (whisper.cpp's server, faster-whisper, vLLM, LocalAI)", func(c *Config) *string { return &c.Agent.STT.BaseURL }, checkHTTPURL),
		stringKey("agent.stt.model", "", "agent.stt.engine openai: the transcription model, e.g. whisper-1", func(c *Config) *string { return &c.Agent.STT.Model }, nil),
		stringKey("agent.stt.api_key_file", "", "agent.stt.engine openai: file holding the API key (sent as Authorization: Bearer); empty: none", func(c *Config) *string { return &c.Agent.STT.APIKeyFile }, nil),
		durationKey("agent.tasks.keep.age", "", "serve: a finished task older than this is deleted", func(c *Config) *time.Duration { return &c.Agent.Tasks.KeepAge }),
		intKey("agent.tasks.keep.count", "", "serve: tasks kept; past it the oldest finished ones are deleted", func(c *Config) *int { return &c.Agent.Tasks.KeepCount }, 1, 1<<30),
		intKey("agent.limits.connections", "", "serve: open connections in all; more wait in the kernel's queue", func(c *Config) *int { return &c.Agent.Limits.Connections }, 1, 1<<20),
		intKey("agent.limits.connections_per_address", "", "serve: open connections from one IP address; more are closed at once", func(c *Config) *int { return &c.Agent.Limits.ConnectionsPerAddress }, 1, 1<<20),
		durationKey("agent.limits.header_timeout", "", "serve: time to read a request's header", func(c *Config) *time.Duration { return &c.Agent.Limits.HeaderTimeout }),
		durationKey("agent.limits.body_timeout", "", "serve: time to read a request's body", func(c *Config) *time.Duration { return &c.Agent.Limits.BodyTimeout }),
		durationKey("agent.limits.idle_timeout", "", "serve: a kept-alive connection with no request this long is closed", func(c *Config) *time.Duration { return &c.Agent.Limits.IdleTimeout }),
		durationKey("agent.limits.write_timeout", "", "serve: time for one write to a client; a stream whose reader stalls this long is dropped", func(c *Config) *time.Duration { return &c.Agent.Limits.WriteTimeout }),
		sizeKey("agent.limits.request_bytes", "", "serve: largest HTTP request body (413 past it)", func(c *Config) *int64 { return &c.Agent.Limits.RequestBytes }),
		sizeKey("agent.limits.message_bytes", "", "serve: largest text of one message to the agent (-32600 past it)", func(c *Config) *int64 { return &c.Agent.Limits.MessageBytes }),
		intKey("agent.limits.task_history", "", "serve: messages one task may hold; a send past it is refused (-32600)", func(c *Config) *int { return &c.Agent.Limits.TaskHistory }, 2, 1<<20),
		intKey("agent.limits.tools_per_device", "", "serve: tools one device may register (-32602 past it)", func(c *Config) *int { return &c.Agent.Limits.ToolsPerDevice }, 1, 1<<16),
		sizeKey("agent.limits.schema_bytes", "", "serve: one device's tool declarations as JSON (-32602 past it)", func(c *Config) *int64 { return &c.Agent.Limits.SchemaBytes }),
		intKey("agent.limits.mcp_sessions", "", "serve: open MCP sessions at /mcp; past it the idlest is closed", func(c *Config) *int { return &c.Agent.Limits.MCPSessions }, 1, 1<<20),
		durationKey("agent.limits.mcp_session_idle", "", "serve: an MCP session unused this long is closed", func(c *Config) *time.Duration { return &c.Agent.Limits.MCPSessionIdle }),
		intKey("agent.limits.turns", "", "serve, sim: turns running at once, every front door together; more are refused (HTTP 503 / -32603 with data.details)", func(c *Config) *int { return &c.Agent.Limits.Turns }, 1, 1<<20),
		sizeKey("agent.limits.web_call_bytes", "", "serve: what the web page keeps of one call's input or result", func(c *Config) *int64 { return &c.Agent.Limits.WebCallBytes }),
		intKey("agent.limits.web_calls", "", "serve: calls the web page keeps per device", func(c *Config) *int { return &c.Agent.Limits.WebCalls }, 1, 1<<20),
		stringKey("llm.base_url", "llm-url", "agent.planner llm: the OpenAI-compatible API's base URL, e.g. http://127.0.0.1:11434/v1", func(c *Config) *string { return &c.LLM.BaseURL }, checkHTTPURL),
		stringKey("llm.model", "llm-model", "agent.planner llm: the model, e.g. qwen3:8b", func(c *Config) *string { return &c.LLM.Model }, nil),
		stringKey("llm.api_key_file", "", "agent.planner llm: file holding the API key (sent as Authorization: Bearer); empty: none", func(c *Config) *string { return &c.LLM.APIKeyFile }, nil),
	}
}

// CheckAgent validates the agent's keys together, for the commands that run the agent (serve,
// sim). Check leaves them alone: a device ignores them.
func (c *Config) CheckAgent() error {
	if c.Agent.TokenFile == "" && !isLoopback(c.Agent.Listen) {
		return &Error{Key: "agent.listen", Err: fmt.Errorf("%s is reachable beyond this machine, and agent.token_file is not set: set it, or listen on 127.0.0.1", c.Agent.Listen)}
	}
	if c.Agent.DeviceTokensFile == "" && !c.Agent.DevicesOpen && !isLoopback(c.Agent.Listen) {
		return &Error{Key: "agent.device_tokens_file", Err: fmt.Errorf("agent.listen %s is reachable beyond this machine, and any device could register with any MAC: set agent.device_tokens_file (the tokens devices must present), set agent.devices_open: true to let any device register, or listen on 127.0.0.1", c.Agent.Listen)}
	}
	if err := checkAliasesUnique(c.Agent.DeviceAliases); err != nil {
		return &Error{Key: "agent.device_aliases", Err: err}
	}
	switch c.Agent.STT.Engine {
	case STTEngineCommand:
		if len(c.Agent.STT.Command) == 0 {
			return &Error{Key: "agent.stt.command", Err: errors.New("agent.stt.engine is command and agent.stt.command is empty: name a program that reads a WAV and prints the text")}
		}
	case STTEngineOpenAI:
		if c.Agent.STT.BaseURL == "" {
			return &Error{Key: "agent.stt.base_url", Err: errors.New("agent.stt.engine is openai and agent.stt.base_url is not set")}
		}
		if c.Agent.STT.Model == "" {
			return &Error{Key: "agent.stt.model", Err: errors.New("agent.stt.engine is openai and agent.stt.model is not set")}
		}
	}
	if c.Agent.Planner == PlannerLLM {
		if c.LLM.BaseURL == "" {
			return &Error{Key: "llm.base_url", Err: errors.New("agent.planner is llm and llm.base_url is not set")}
		}
		if c.LLM.Model == "" {
			return &Error{Key: "llm.model", Err: errors.New("agent.planner is llm and llm.model is not set")}
		}
	}
	return nil
}

// AgentDBPath returns where the agent's database lives: agent.state_dir, else device.state_dir,
// else the first writable of the system and the user's state directories (see StateDirs). The
// directory is made when missing.
func AgentDBPath(c *Config, getenv func(string) string) (string, error) {
	if c.Agent.StateDir != "" {
		if err := os.MkdirAll(c.Agent.StateDir, 0o750); err != nil {
			return "", &Error{Key: "agent.state_dir", Err: err}
		}
		return filepath.Join(c.Agent.StateDir, agentDBName), nil
	}
	dirs := StateDirs(c.Device, getenv)
	dir, err := writableDir(dirs)
	if err != nil {
		return "", &Error{Key: "agent.state_dir", Err: fmt.Errorf("not set, and none of %s can hold agent.db: %w", strings.Join(dirs, ", "), err)}
	}
	return filepath.Join(dir, agentDBName), nil
}

// ReadTokens reads a file of tokens (agent.device_tokens_file): one a line, blank lines and
// lines starting with # skipped, no spaces within a token. key names the file's key in errors.
func ReadTokens(key, path string, log *slog.Logger) ([]string, error) {
	text, err := ReadSecret(key, path, log)
	if err != nil {
		return nil, err
	}
	var tokens []string
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.ContainsAny(line, " \t") {
			return nil, &Error{Key: key, Err: fmt.Errorf("%s line %d: a token holds no spaces (one token per line)", path, i+1)}
		}
		tokens = append(tokens, line)
	}
	if len(tokens) == 0 {
		return nil, &Error{Key: key, Err: fmt.Errorf("%s holds no token", path)}
	}
	return tokens, nil
}

// aliasPattern is what a device alias may be (with at most 32 bytes): it starts an MCP tool
// name (ALIAS__TOOL), whose charset is [A-Za-z0-9_-]; no "__" and no "_" at either end, so the
// first "__" of a tool name ends the alias.
var aliasPattern = regexp.MustCompile(`^[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*$`)

// deviceAliasesKey is agent.device_aliases: {MAC: alias}, each MAC normalised, each alias
// checked here and their uniqueness in CheckAgent.
func deviceAliasesKey() setting {
	return setting{
		key: "agent.device_aliases", typ: "map",
		usage: "serve: short names of devices in the MCP server's tool names (ALIAS__amplify_volume), by MAC, e.g. {AA-BB-CC-DD-EE-FF: desk}; a device without one is named by its MAC",
		get: func(c *Config) string {
			m := c.Agent.DeviceAliases
			macs := slices.Sorted(maps.Keys(m))
			for i, mac := range macs {
				macs[i] = mac + ": " + m[mac]
			}
			return "{" + strings.Join(macs, ", ") + "}"
		},
		setEntry: func(c *Config, mac, alias string) error {
			norm, err := checkMAC(mac)
			if err != nil {
				return err
			}
			if !aliasPattern.MatchString(alias) || len(alias) > 32 {
				return fmt.Errorf("alias %q: want 1 to 32 of A-Z a-z 0-9 _ -, with no \"__\" and no \"_\" at either end (it starts MCP tool names, ALIAS__TOOL)", alias)
			}
			if _, err := checkMAC(alias); err == nil {
				return fmt.Errorf("alias %q is itself a MAC: it could name another device", alias)
			}
			if _, dup := c.Agent.DeviceAliases[norm]; dup {
				return fmt.Errorf("%s is given twice (as %q)", norm, mac)
			}
			if c.Agent.DeviceAliases == nil {
				c.Agent.DeviceAliases = map[string]string{}
			}
			c.Agent.DeviceAliases[norm] = alias
			return nil
		},
	}
}

// checkAliasesUnique refuses two devices with one alias: their tools would share names.
func checkAliasesUnique(aliases map[string]string) error {
	owner := make(map[string]string, len(aliases))
	for _, mac := range slices.Sorted(maps.Keys(aliases)) {
		a := aliases[mac]
		if other, dup := owner[a]; dup {
			return fmt.Errorf("alias %q names both %s and %s", a, other, mac)
		}
		owner[a] = mac
	}
	return nil
}
