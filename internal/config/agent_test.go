//go:build !devicectl_omit_serve || !devicectl_omit_sim

package config

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every agent and llm key rejects a bad value with an error naming the key, the problem and the
// line, as TestBadValues checks the others.
func TestAgentBadValues(t *testing.T) {
	tested := checkBadValues(t, []badValue{
		{"agent.listen", ":http", `port "http" is not a number`},
		{"agent.listen", "localhost", `"localhost" is not host:port (e.g. 127.0.0.1:8765)`},
		{"agent.planner", "gpt", `"gpt" is not one of rules, llm`},
		{"agent.turn_timeout", "0s", "must be positive"},
		{"agent.wait_for_control", "maybe", "is not true or false"},
		{"agent.state_dir", "[a]", "want a single value"},
		{"agent.token_file", "{a: b}", "want a single value"},
		{"agent.device_tokens_file", "[a, b]", "want a single value"},
		{"agent.device_aliases", "[desk]", "want name: value pairs, got a list"},
		{"agent.web", "yes please", "is not true or false"},
		{"agent.public_url", "robot.example", "is not an http:// or https:// URL"},
		{"agent.allowed_hosts", "robot.lan", "want a list"},
		{"agent.allowed_origins", `[http://a, ""]`, "item 2 is empty"},
		{"agent.devices_open", "sometimes", "is not true or false"},
		{"agent.timezone", "Mars/Olympus", `"Mars/Olympus" is not an IANA time zone name`},
		{"agent.store", "mysql://db.example/devicectl", "not a postgres:// or postgresql:// URL"},
		{"agent.reminders.grace", "soon", "is not a duration"},
		{"agent.tasks.keep.age", "0s", "must be positive"},
		{"agent.tasks.keep.count", "0", "out of range"},
		{"agent.limits.connections", "0", "out of range"},
		{"agent.limits.connections_per_address", "-1", "out of range"},
		{"agent.limits.header_timeout", "never", "is not a duration"},
		{"agent.limits.body_timeout", "0s", "must be positive"},
		{"agent.limits.idle_timeout", "-1s", "must be positive"},
		{"agent.limits.write_timeout", "0s", "must be positive"},
		{"agent.limits.request_bytes", "lots", "size"},
		{"agent.limits.message_bytes", "[1]", "want a single value"},
		{"agent.limits.task_history", "1", "out of range"},
		{"agent.limits.tools_per_device", "0", "out of range"},
		{"agent.limits.schema_bytes", "big", "size"},
		{"agent.limits.mcp_sessions", "0", "out of range"},
		{"agent.limits.mcp_session_idle", "0s", "must be positive"},
		{"agent.limits.turns", "0", "out of range"},
		{"agent.limits.web_call_bytes", "{}", "want a single value"},
		{"agent.limits.web_calls", "0", "out of range"},
		{"agent.search.searxng_url", "searx.local", "is not an http:// or https:// URL"},
		{"agent.stt.engine", "whisper", `"whisper" is not one of auto, command, openai, none`},
		{"agent.cluster.nats", "http://n:4222", "want nats://HOST:PORT"},
		{"agent.cluster.nats", "nats://a:4222,b:4222", `URL 2 ("b:4222"): want nats://HOST:PORT`},
		{"agent.cluster.token_file", "[a]", "want a single value"},
		{"agent.cluster.name", "a.b", "want 1 to 32 of A-Z a-z 0-9 _ -"},
		{"agent.cluster.node", "node 1", "want 1 to 64 of A-Z a-z 0-9 _ -"},
		{"agent.cluster.ttl", "0s", "must be positive"},
		{"agent.stt.command", "[a, '']", "item 2 is empty"},
		{"agent.stt.base_url", "localhost:8080", "is not an http:// or https:// URL"},
		{"agent.stt.model", "[a]", "want a single value"},
		{"agent.stt.api_key_file", "{}", "want a single value"},
		{"llm.base_url", "ftp://x/v1", "is not an http:// or https:// URL"},
		{"llm.model", "[a]", "want a single value"},
		{"llm.api_key_file", "{}", "want a single value"},
	})
	for _, s := range agentKeys() {
		if !tested[s.key] {
			t.Errorf("no bad-value case for %s", s.key)
		}
	}
}

func TestAgentDefaults(t *testing.T) {
	a := Defaults().Agent
	if a.Listen != "127.0.0.1:8765" || a.Planner != PlannerRules || a.WaitForControl || a.TurnTimeout <= 0 {
		t.Errorf("agent defaults %+v: want loopback, rules, no wait for control, a turn deadline", a)
	}
	if err := Defaults().CheckAgent(); err != nil {
		t.Errorf("the defaults fail CheckAgent: %v", err)
	}
}

func TestCheckAgent(t *testing.T) {
	cases := []struct {
		name    string
		doc     string
		wantKey string // "" for no error
		want    string
	}{
		{"loopback without token", "agent: {listen: 127.0.0.1:9000}", "", ""},
		{"localhost without token", "agent: {listen: 'localhost:9000'}", "", ""},
		{"LAN without token", "agent: {listen: 0.0.0.0:8765}", "agent.listen", "0.0.0.0:8765 is reachable beyond this machine, and agent.token_file is not set"},
		{"all interfaces without token", "agent: {listen: ':8765'}", "agent.listen", "agent.token_file is not set"},
		{"LAN with token, devices neither", "agent: {listen: 0.0.0.0:8765, token_file: /etc/devicectl/agent.token}", "agent.device_tokens_file",
			"agent.listen 0.0.0.0:8765 is reachable beyond this machine, and any device could register with any MAC: set agent.device_tokens_file (the tokens devices must present), set agent.devices_open: true"},
		{"LAN with tokens", "agent: {listen: 0.0.0.0:8765, token_file: /etc/devicectl/agent.token, device_tokens_file: /etc/devicectl/devices.tokens}", "", ""},
		{"LAN with token, devices open", "agent: {listen: 0.0.0.0:8765, token_file: /etc/devicectl/agent.token, devices_open: true}", "", ""},
		{"loopback, devices_open unset", "agent: {listen: '[::1]:8765'}", "", ""},
		{"llm without url", "agent: {planner: llm}\nllm: {model: m}", "llm.base_url", "agent.planner is llm and llm.base_url is not set"},
		{"llm without model", "agent: {planner: llm}\nllm: {base_url: 'http://127.0.0.1:11434/v1'}", "llm.model", "llm.model is not set"},
		{"llm complete", "agent: {planner: llm}\nllm: {base_url: 'http://127.0.0.1:11434/v1', model: m}", "", ""},
		{"llm keys with rules", "llm: {model: m}", "", ""},
		{"stt command without argv", "agent: {stt: {engine: command}}", "agent.stt.command", "agent.stt.engine is command and agent.stt.command is empty"},
		{"stt command", "agent: {stt: {engine: command, command: [whisper-cli, -f, '{wav}']}}", "", ""},
		{"stt openai without url", "agent: {stt: {engine: openai, model: whisper-1}}", "agent.stt.base_url", "agent.stt.engine is openai and agent.stt.base_url is not set"},
		{"stt openai without model", "agent: {stt: {engine: openai, base_url: 'http://127.0.0.1:8080/v1'}}", "agent.stt.model", "agent.stt.model is not set"},
		{"stt openai", "agent: {stt: {engine: openai, base_url: 'http://127.0.0.1:8080/v1', model: whisper-1}}", "", ""},
		{"device aliases", "agent: {device_aliases: {aa:bb:cc:dd:ee:01: desk, AA-BB-CC-DD-EE-02: kitchen}}", "", ""},
		{"cluster", "agent: {cluster: {nats: 'nats://10.0.0.5:4222,nats://10.0.0.6:4222', node: serve-1, ttl: 10s}}", "", ""},
		{"cluster ttl too short", "agent: {cluster: {nats: 'nats://10.0.0.5:4222', ttl: 2s}}", "agent.cluster.ttl", "2s is shorter than 3s"},
		{"one alias for two devices", "agent: {device_aliases: {AA-BB-CC-DD-EE-01: desk, AA-BB-CC-DD-EE-02: desk}}", "agent.device_aliases", `alias "desk" names both AA-BB-CC-DD-EE-01 and AA-BB-CC-DD-EE-02`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Defaults()
			if err := Parse([]byte(tc.doc), c); err != nil {
				t.Fatal(err)
			}
			err := c.CheckAgent()
			if tc.wantKey == "" {
				if err != nil {
					t.Errorf("CheckAgent: %v, want nil", err)
				}
				return
			}
			var ce *Error
			if !errors.As(err, &ce) || ce.Key != tc.wantKey || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("CheckAgent: %v, want a *Error on %s containing %q", err, tc.wantKey, tc.want)
			}
			// A device ignores the agent's keys.
			if err := c.Check(); err != nil {
				t.Errorf("Check: %v, want nil (a device ignores the agent section)", err)
			}
		})
	}
}

func TestAgentDBPath(t *testing.T) {
	getenv := func(string) string { return "" }
	dir := filepath.Join(t.TempDir(), "agent")
	c := Defaults()
	c.Agent.StateDir = dir
	c.Device.StateDir = t.TempDir()
	got, err := AgentDBPath(c, getenv)
	if err != nil || got != filepath.Join(dir, "agent.db") {
		t.Errorf("agent.state_dir: %q, %v; want %s/agent.db", got, err, dir)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Errorf("agent.state_dir was not made: %v", err)
	}

	c.Agent.StateDir = ""
	got, err = AgentDBPath(c, getenv)
	if err != nil || got != filepath.Join(c.Device.StateDir, "agent.db") {
		t.Errorf("device.state_dir: %q, %v; want it to hold agent.db", got, err)
	}

	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	c.Agent.StateDir = filepath.Join(file, "sub")
	var ce *Error
	if _, err := AgentDBPath(c, getenv); !errors.As(err, &ce) || ce.Key != "agent.state_dir" {
		t.Errorf("a state dir under a file: %v, want a *Error on agent.state_dir", err)
	}
}

func TestReadTokens(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	write := func(text string) string {
		p := filepath.Join(t.TempDir(), "tokens")
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	got, err := ReadTokens("agent.device_tokens_file", write("# devices\nalpha\n\n  beta  \n"), log)
	if err != nil || strings.Join(got, ",") != "alpha,beta" {
		t.Errorf("ReadTokens: %q, %v; want alpha, beta", got, err)
	}
	for text, want := range map[string]string{
		"# none\n\n": "holds no token",
		"a b\n":      "line 1: a token holds no spaces",
	} {
		_, err := ReadTokens("agent.device_tokens_file", write(text), log)
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != "agent.device_tokens_file" || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadTokens(%q): %v; want a *Error on agent.device_tokens_file containing %q", text, err, want)
		}
	}
}

// An alias is keyed by the MAC as the protocol writes it, and must fit an MCP tool name's start.
func TestDeviceAliases(t *testing.T) {
	c := Defaults()
	if err := Parse([]byte("agent: {device_aliases: {'aa:bb:cc:dd:ee:01': desk}}"), c); err != nil {
		t.Fatal(err)
	}
	if got := c.Agent.DeviceAliases["AA-BB-CC-DD-EE-01"]; got != "desk" {
		t.Errorf("DeviceAliases = %v, want AA-BB-CC-DD-EE-01: desk", c.Agent.DeviceAliases)
	}
	for doc, want := range map[string]string{
		"{AA-BB-CC-DD-EE-01: 'my desk'}":                       `agent.device_aliases.AA-BB-CC-DD-EE-01: alias "my desk": want 1 to 32 of A-Z a-z 0-9 _ -`,
		"{AA-BB-CC-DD-EE-01: desk.left}":                       `alias "desk.left"`,
		"{AA-BB-CC-DD-EE-01: desk__left}":                      `alias "desk__left"`,
		"{AA-BB-CC-DD-EE-01: desk_}":                           `alias "desk_"`,
		"{AA-BB-CC-DD-EE-01: AA-BB-CC-DD-EE-02}":               "is itself a MAC",
		"{robot: desk}":                                        `"robot" is not a MAC address`,
		"{AA-BB-CC-DD-EE-01: a, 'aa:bb:cc:dd:ee:01': b}":       "AA-BB-CC-DD-EE-01 is given twice",
		"{AA-BB-CC-DD-EE-01: " + strings.Repeat("x", 33) + "}": "want 1 to 32",
	} {
		err := Parse([]byte("agent: {device_aliases: "+doc+"}"), Defaults())
		var ce *Error
		if !errors.As(err, &ce) || !strings.HasPrefix(ce.Key, "agent.device_aliases") || !strings.Contains(err.Error(), want) {
			t.Errorf("device_aliases %s: %v; want a *Error on agent.device_aliases containing %q", doc, err, want)
		}
	}
}

// agent.store takes a PostgreSQL URL; anything else is refused without repeating the value (it
// may hold a password). AgentStore gives the URL, else agent.db's path.
func TestAgentStore(t *testing.T) {
	getenv := func(string) string { return "" }
	c := Defaults()
	c.Agent.StateDir = t.TempDir()
	if got, err := AgentStore(c, getenv); err != nil || got != filepath.Join(c.Agent.StateDir, "agent.db") {
		t.Errorf("agent.store unset: %q, %v; want agent.db in agent.state_dir", got, err)
	}
	for _, dsn := range []string{"postgres://devicectl@db.example:5432/devicectl?sslmode=verify-full", "postgresql:///devicectl?host=/run/postgresql"} {
		c := Defaults()
		if err := Parse([]byte("agent: {store: '"+dsn+"'}"), c); err != nil {
			t.Errorf("%s: %v", dsn, err)
			continue
		}
		if got, err := AgentStore(c, getenv); err != nil || got != dsn {
			t.Errorf("AgentStore: %q, %v; want %s", got, err, dsn)
		}
	}
	for _, bad := range []string{"mysql://u:s3cret@db/x", "/var/lib/devicectl/agent.db", "u:s3cret@db"} {
		err := Parse([]byte("agent: {store: '"+bad+"'}"), Defaults())
		if err == nil || !strings.Contains(err.Error(), "agent.store") || !strings.Contains(err.Error(), "not a postgres://") || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("agent.store %q: %v; want a refusal naming the key, without the value", bad, err)
		}
	}
}

// examples/cluster/serve.yaml, which the nodes of examples/cluster/compose.yaml read, loads and
// passes serve's checks: their tasks, memories, reminders and bindings in the compose file's
// PostgreSQL (agent.store), their devices shared over its NATS.
func TestClusterExample(t *testing.T) {
	c, err := Load("../../examples/cluster/serve.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CheckAgent(); err != nil {
		t.Fatalf("serve would refuse it: %v", err)
	}
	const dsn = "postgres://devicectl@postgres:5432/devicectl"
	if got, err := AgentStore(c, func(string) string { return "" }); err != nil || got != dsn {
		t.Errorf("the database: %q, %v; want %s (the compose file's postgres service)", got, err, dsn)
	}
	if c.Agent.Cluster.NATS != "nats://nats:4222" {
		t.Errorf("agent.cluster.nats %q; want the compose file's nats service", c.Agent.Cluster.NATS)
	}
	if c.Agent.Cluster.Node != "" {
		t.Errorf("agent.cluster.node %q: the three nodes share the file, so it must be left to each", c.Agent.Cluster.Node)
	}
	if c.Agent.Listen != "0.0.0.0:8765" || c.Agent.TokenFile == "" || c.Agent.DeviceTokensFile == "" {
		t.Errorf("listen %q, token_file %q, device_tokens_file %q: want every interface, with both token files",
			c.Agent.Listen, c.Agent.TokenFile, c.Agent.DeviceTokensFile)
	}
}
