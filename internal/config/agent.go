//go:build !devicectl_omit_serve || !devicectl_omit_sim

package config

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// agentSections are Config's agent and llm sections, in the builds that run the agent server.
type agentSections struct {
	Agent AgentConfig
	LLM   LLMConfig
}

func defaultAgentSections() agentSections { return agentSections{Agent: defaultAgent()} }

// AgentConfig is the agent server that `devicectl serve` runs and `devicectl sim` runs in process:
// where it listens, how it plans, how it treats devices' control tools, where it keeps its
// database and which credentials it asks for. A device (`devicectl run`) ignores it.
type AgentConfig struct {
	Listen           string        // host:port of the hub, the A2A routes and the seed's routes
	Planner          string        // "rules" (built in) or "llm" (the llm section)
	TurnTimeout      time.Duration // one turn, from what was said to the final reply
	WaitForControl   bool          // false: a control tool answers the model "success" at once
	StateDir         string        // where agent.db lives; empty: as device.state_dir resolves
	Store            string        // the database when not agent.db: a postgres:// URL
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
	Cluster   ClusterConfig
}

// ClusterConfig makes serve one node of several that share their devices over NATS
// (agent/cluster): behind one name, a turn on any node reaches a device on any node.
type ClusterConfig struct {
	NATS      string        // the NATS server's URL(s); empty: a single node
	TokenFile string        // file holding NATS's token; empty: none (or user:password in NATS)
	Name      string        // the cluster's name: the nodes that share it share their devices
	Node      string        // this node's name; empty: the host name and a random suffix
	TTL       time.Duration // how long a dead node's holds outlive it
}

// MinClusterTTL is agent.cluster.ttl's least value: holds are renewed every third of it.
const MinClusterTTL = 3 * time.Second

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
		Cluster:   ClusterConfig{Name: "devicectl", TTL: 15 * time.Second},
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
	if c.Agent.Cluster.TTL < MinClusterTTL {
		return &Error{Key: "agent.cluster.ttl", Err: fmt.Errorf("%s is shorter than %s: the holds are renewed every third of it", c.Agent.Cluster.TTL, MinClusterTTL)}
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

// AgentStore returns where the agent keeps its database, for agent/store.Open: agent.store when
// set (a PostgreSQL URL), else AgentDBPath's file.
func AgentStore(c *Config, getenv func(string) string) (string, error) {
	if c.Agent.Store != "" {
		return c.Agent.Store, nil
	}
	return AgentDBPath(c, getenv)
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
