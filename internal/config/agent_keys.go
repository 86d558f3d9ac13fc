//go:build !devicectl_omit_serve || !devicectl_omit_sim

package config

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// agentKeys are the agent and llm sections' keys, in the order of configs/devicectl.yaml. They
// are compiled only into builds that run the agent (serve, sim): a board binary reads those
// sections as ignored (agent_board.go).
func agentKeys() []setting {
	return []setting{
		stringKey("agent.listen", "listen", "serve: the agent server's address, host:port; devices dial ws://ADDR/ (any path), A2A and the seed's routes are on http://ADDR/. Beyond loopback it needs agent.token_file", func(c *Config) *string { return &c.Agent.Listen }, checkListen(DefaultAgentListen)),
		enumKey("agent.planner", "planner", "serve, sim: who decides what a turn does: rules, the built-in rule planner (no network, no model), or llm, the OpenAI-compatible endpoint of the llm section", func(c *Config) *string { return &c.Agent.Planner }, PlannerRules, PlannerLLM),
		durationKey("agent.turn_timeout", "turn-timeout", "serve, sim: one turn's deadline, from what was said to the final reply", func(c *Config) *time.Duration { return &c.Agent.TurnTimeout }),
		boolKey("agent.wait_for_control", "", "serve, sim: wait for the device's answer to a control tool (false: answer the planner \"success\" at once, as seed 002 says)", func(c *Config) *bool { return &c.Agent.WaitForControl }),
		stringKey("agent.state_dir", "", "serve: directory of agent.db (memories, tasks, reminders, device bindings); empty: as device.state_dir", func(c *Config) *string { return &c.Agent.StateDir }, nil),
		stringKey("agent.store", "", "serve: the agent's database: empty, the SQLite file agent.db in agent.state_dir (nothing to install); postgres://USER@HOST:PORT/DB (or postgresql://), a PostgreSQL database several serve processes may share, its password best in ~/.pgpass or PGPASSWORD", func(c *Config) *string { return &c.Agent.Store }, checkStore),
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
		intKey("agent.limits.connections", "", "serve: open connections in all (at most the open-file limit less 256); at the cap the connection idle the longest is closed for a new one, and when all are busy new ones wait in the kernel's queue", func(c *Config) *int { return &c.Agent.Limits.Connections }, 1, 1<<20),
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
		stringKey("agent.cluster.nats", "", "serve: the NATS server (JetStream on) of a cluster of serve nodes that share their devices, nats://HOST:4222 or tls://... (several separated by commas); empty: this serve is the only node", func(c *Config) *string { return &c.Agent.Cluster.NATS }, checkNATSURLs),
		stringKey("agent.cluster.token_file", "", "serve: file holding the token NATS asks for (mode 0600); empty: none (a user:password may be in agent.cluster.nats)", func(c *Config) *string { return &c.Agent.Cluster.TokenFile }, nil),
		stringKey("agent.cluster.name", "", "serve: the cluster's name; the nodes with the same name on one NATS share their devices (it prefixes the NATS subjects and key-value buckets)", func(c *Config) *string { return &c.Agent.Cluster.Name }, checkSubjectToken(32)),
		stringKey("agent.cluster.node", "", "serve: this node's name, unique in the cluster; empty: the host name and a random suffix", func(c *Config) *string { return &c.Agent.Cluster.Node }, checkSubjectToken(64)),
		durationKey("agent.cluster.ttl", "", "serve: how long a node's hold on a device outlives the node: renewed every third of it, it frees a dead or cut-off node's devices within it (a dead node's devices may register elsewhere at once anyway); at least 3s", func(c *Config) *time.Duration { return &c.Agent.Cluster.TTL }),
		stringKey("llm.base_url", "llm-url", "agent.planner llm: the OpenAI-compatible API's base URL, e.g. http://127.0.0.1:11434/v1", func(c *Config) *string { return &c.LLM.BaseURL }, checkHTTPURL),
		stringKey("llm.model", "llm-model", "agent.planner llm: the model, e.g. qwen3:8b", func(c *Config) *string { return &c.LLM.Model }, nil),
		stringKey("llm.api_key_file", "", "agent.planner llm: file holding the API key (sent as Authorization: Bearer); empty: none", func(c *Config) *string { return &c.LLM.APIKeyFile }, nil),
	}
}

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

// aliasPattern is what a device alias may be (with at most 32 bytes): it starts an MCP tool
// name (ALIAS__TOOL), whose charset is [A-Za-z0-9_-]; no "__" and no "_" at either end, so the
// first "__" of a tool name ends the alias.
var aliasPattern = regexp.MustCompile(`^[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*$`)

// checkNATSURLs accepts agent.cluster.nats: URLs separated by commas, each named by its place
// when it is wrong.
func checkNATSURLs(v string) (string, error) {
	parts := strings.Split(v, ",")
	for i, p := range parts {
		u, err := url.Parse(strings.TrimSpace(p))
		where := fmt.Sprintf("%q", p)
		if len(parts) > 1 {
			where = fmt.Sprintf("URL %d (%q)", i+1, p)
		}
		switch {
		case err != nil:
			return "", fmt.Errorf("%s is not a URL", where)
		case u.Scheme != "nats" && u.Scheme != "tls" && u.Scheme != "ws" && u.Scheme != "wss":
			return "", fmt.Errorf("%s: want nats://HOST:PORT (or tls://, ws://, wss://)", where)
		case u.Host == "":
			return "", fmt.Errorf("%s: no host", where)
		}
	}
	return v, nil
}

// subjectToken is what names a cluster or a node: a token of a NATS subject, and of a bucket's name.
var subjectToken = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

func checkSubjectToken(max int) func(string) (string, error) {
	return func(v string) (string, error) {
		if !subjectToken.MatchString(v) || len(v) > max {
			return "", fmt.Errorf("%q: want 1 to %d of A-Z a-z 0-9 _ -", v, max)
		}
		return v, nil
	}
}

// checkTimezone accepts an IANA zone name Go can load.
func checkTimezone(v string) (string, error) {
	if _, err := time.LoadLocation(v); err != nil || v == "Local" {
		return "", fmt.Errorf("%q is not an IANA time zone name, e.g. Asia/Shanghai or Europe/Berlin", v)
	}
	return v, nil
}

// checkStore accepts a postgres:// or postgresql:// URL. Its error does not repeat the value,
// which may hold a password.
func checkStore(v string) (string, error) {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", errors.New("not a postgres:// or postgresql:// URL (e.g. postgres://devicectl@db.example/devicectl); empty keeps agent.db in agent.state_dir")
	}
	return v, nil
}
