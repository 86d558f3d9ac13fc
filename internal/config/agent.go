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
	// DeviceAliases names devices in the MCP server's tool names (ALIAS.amplify_volume), by
	// MAC as the protocol writes it; a device without one is named by its MAC.
	DeviceAliases map[string]string
}

// SearchConfig is the backend of the search_web tool.
type SearchConfig struct {
	SearXNGURL string // a SearXNG instance's root; its JSON API must be enabled
}

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
	return AgentConfig{Listen: DefaultAgentListen, Planner: PlannerRules, TurnTimeout: 60 * time.Second}
}

// agentSettings are the agent and llm sections' keys, in the order of configs/devicectl.yaml.
func agentSettings() []setting {
	return []setting{
		stringKey("agent.listen", "listen", "serve: the agent server's address, host:port; devices dial ws://ADDR/ (any path), A2A and the seed's routes are on http://ADDR/. Beyond loopback it needs agent.token_file", func(c *Config) *string { return &c.Agent.Listen }, checkListen),
		enumKey("agent.planner", "planner", "serve, sim: who decides what a turn does: rules, the built-in rule planner (no network, no model), or llm, the OpenAI-compatible endpoint of the llm section", func(c *Config) *string { return &c.Agent.Planner }, PlannerRules, PlannerLLM),
		durationKey("agent.turn_timeout", "turn-timeout", "serve, sim: one turn's deadline, from what was said to the final reply", func(c *Config) *time.Duration { return &c.Agent.TurnTimeout }),
		boolKey("agent.wait_for_control", "", "serve, sim: wait for the device's answer to a control tool (false: answer the planner \"success\" at once, as seed 002 says)", func(c *Config) *bool { return &c.Agent.WaitForControl }),
		stringKey("agent.state_dir", "", "serve: directory of agent.db (memories, tasks); empty: as device.state_dir", func(c *Config) *string { return &c.Agent.StateDir }, nil),
		stringKey("agent.token_file", "", "serve: file holding the bearer token HTTP clients (A2A, the seed's routes) must send; empty: none, allowed on loopback only", func(c *Config) *string { return &c.Agent.TokenFile }, nil),
		stringKey("agent.device_tokens_file", "", "serve: file of device tokens, one per line (# comments); a device registers only with one of them as its bearer token; empty: any device", func(c *Config) *string { return &c.Agent.DeviceTokensFile }, nil),
		deviceAliasesKey(),
		boolKey("agent.web", "web", "serve: serve the web page (faces, volume, conversation, tool log) at http://ADDR/, with agent.token_file's credentials", func(c *Config) *bool { return &c.Agent.Web }),
		stringKey("agent.search.searxng_url", "", "serve, sim: the SearXNG instance search_web asks (its JSON API enabled), e.g. http://127.0.0.1:8888; empty: search_web answers that no backend is configured", func(c *Config) *string { return &c.Agent.Search.SearXNGURL }, checkHTTPURL),
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
	if err := checkAliasesUnique(c.Agent.DeviceAliases); err != nil {
		return &Error{Key: "agent.device_aliases", Err: err}
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

// aliasPattern is what a device alias may be: it starts an MCP tool name (ALIAS.TOOL), whose
// charset is [A-Za-z0-9_.-]; no dot, so the first dot of a tool name ends the alias.
var aliasPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// deviceAliasesKey is agent.device_aliases: {MAC: alias}, each MAC normalised, each alias
// checked here and their uniqueness in CheckAgent.
func deviceAliasesKey() setting {
	return setting{
		key: "agent.device_aliases", typ: "map",
		usage: "serve: short names of devices in the MCP server's tool names (ALIAS.amplify_volume), by MAC, e.g. {AA-BB-CC-DD-EE-FF: desk}; a device without one is named by its MAC",
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
			if !aliasPattern.MatchString(alias) {
				return fmt.Errorf("alias %q: want 1 to 32 of A-Z a-z 0-9 _ - (it starts MCP tool names)", alias)
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
