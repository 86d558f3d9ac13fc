package config

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"
)

// yamlFor writes key: value as YAML, nesting dotted keys: "connection.ping_interval" -> line 2.
func yamlFor(key, value string) (doc string, line int) {
	parts := strings.Split(key, ".")
	var b strings.Builder
	for i, p := range parts {
		b.WriteString(strings.Repeat("  ", i) + p + ":")
		if i < len(parts)-1 {
			b.WriteString("\n")
		}
	}
	b.WriteString(" " + value + "\n")
	return b.String(), len(parts)
}

func TestDefaults(t *testing.T) {
	c := Defaults()
	checks := []struct {
		key  string
		want string
	}{
		{"device.language", "zh"},
		{"connection.ping_interval", "20s"},
		{"connection.ping_timeout", "10s"},
		{"connection.read_limit", "1MiB"},
		{"connection.handshake_timeout", "10s"},
		{"connection.register_timeout", "10s"},
		{"connection.backoff_min", "500ms"},
		{"connection.backoff_max", "30s"},
		{"connection.backoff_reset", "3s"},
		{"execution.max_in_flight", "8"},
		{"execution.max_queued", "256"},
		{"execution.tool_timeout", "10s"},
		{"execution.drain_timeout", "5s"},
		{"execution.tool_timeouts", "{}"},
		{"render.show_thoughts", "false"},
		{"render.color", "auto"},
		{"hardware.mode", "config"},
		{"hardware.speaker.driver", "sim"},
		{"hardware.speaker.control", "Master"},
		{"hardware.speaker.address", "0x4B"},
		{"hardware.face.driver", "sim"},
		{"hardware.face.address", "0x3C"},
		{"hardware.face.size", "128x64"},
		{"hardware.face.command", "[]"},
		{"hardware.speech.driver", "none"},
		{"log.level", "info"},
		{"log.format", "auto"},
		{"hooks.timeout", "10s"},
		{"hooks.final_reply", "[]"},
		{"server.url", ""},
		{"server.insecure_skip_verify", "false"},
		{"device.mac", ""},
		{"device.state_dir", ""},
	}
	for _, tc := range checks {
		s := lookupSetting(tc.key)
		if s == nil {
			t.Errorf("no setting %s", tc.key)
			continue
		}
		if got := s.get(c); got != tc.want {
			t.Errorf("default %s = %q, want %q", tc.key, got, tc.want)
		}
	}
	if c.Connection.ReadLimit != 1<<20 {
		t.Errorf("default read limit = %d, want %d", c.Connection.ReadLimit, 1<<20)
	}
}

func TestEmptyFileIsDefaults(t *testing.T) {
	for _, doc := range []string{"", "# nothing\n", "server:\n", "---\n"} {
		c := Defaults()
		if err := Parse([]byte(doc), c); err != nil {
			t.Errorf("Parse(%q) = %v", doc, err)
			continue
		}
		if !reflect.DeepEqual(c, Defaults()) {
			t.Errorf("Parse(%q) changed the defaults: %+v", doc, c)
		}
	}
}

// The example config documents every key with its default: loading it changes nothing, and no key
// is missing from it.
func TestExampleConfig(t *testing.T) {
	data, err := os.ReadFile("../../configs/devicectl.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := Defaults()
	c.Hardware = HardwareConfig{} // so the test sees the file set it
	if err := Parse(data, c); err != nil {
		t.Fatalf("configs/devicectl.yaml: %v", err)
	}
	if !reflect.DeepEqual(c, Defaults()) {
		t.Errorf("configs/devicectl.yaml is not the defaults:\n got %+v\nwant %+v", c, Defaults())
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	present := map[string]bool{}
	var collect func(n *yaml.Node, prefix string)
	collect = func(n *yaml.Node, prefix string) {
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := prefix + n.Content[i].Value
			present[key] = true
			if v := n.Content[i+1]; v.Kind == yaml.MappingNode && lookupSetting(key) == nil {
				collect(v, key+".")
			}
		}
	}
	collect(doc.Content[0], "")
	for _, s := range settings {
		if !present[s.key] {
			t.Errorf("configs/devicectl.yaml lacks %s (default %s)", s.key, s.get(Defaults()))
		}
	}
}

func TestParseValues(t *testing.T) {
	doc := `
server:
  url: wss://agent.example.com/device
  token_file: /etc/devicectl/token
  insecure_skip_verify: true
device:
  mac: aa:bb:cc:00:11:22
  language: en
connection:
  ping_interval: 1s
  read_limit: 512KiB
  backoff_max: 1m
execution:
  max_in_flight: 2
  tool_timeouts:
    get_device_status: 2s
    amplify_volume: 1500ms
render:
  show_thoughts: true
hardware:
  mode: sim
  sim_latency: 0s
  speaker: {driver: max9744, bus: "1", address: 0x4a, optional: true}
  face:
    driver: command
    command: [/usr/local/bin/show-face, --fade, "200"]
  speech: {driver: command, command: [espeak-ng, -v, en], sentences: true}
log:
  level: debug
  format: json
`
	c := Defaults()
	if err := Parse([]byte(doc), c); err != nil {
		t.Fatal(err)
	}
	want := Defaults()
	want.Server.URL = "wss://agent.example.com/device"
	want.Server.TokenFile = "/etc/devicectl/token"
	want.Server.InsecureSkipVerify = true
	want.Device.MAC = "AA-BB-CC-00-11-22"
	want.Device.Language = "en"
	want.Connection.PingInterval = time.Second
	want.Connection.ReadLimit = 512 << 10
	want.Connection.BackoffMax = time.Minute
	want.Execution.MaxInFlight = 2
	want.Execution.ToolTimeouts = map[string]time.Duration{"get_device_status": 2 * time.Second, "amplify_volume": 1500 * time.Millisecond}
	want.Render.ShowThoughts = true
	want.Hardware.Mode = "sim"
	want.Hardware.SimLatency = new(time.Duration(0)) // set, and zero: not the same as unset
	want.Hardware.Speaker = SpeakerConfig{Driver: "max9744", Control: "Master", Tool: "pactl", Bus: "1", Address: 0x4A, Start: 40, Optional: true}
	want.Hardware.Face.Driver = "command"
	want.Hardware.Face.Command = []string{"/usr/local/bin/show-face", "--fade", "200"}
	want.Hardware.Speech = SpeechConfig{Driver: "command", Command: []string{"espeak-ng", "-v", "en"}, Sentences: true}
	want.Log = LogConfig{Level: slog.LevelDebug, Format: "json"}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("parsed\n %+v\nwant\n %+v", c, want)
	}
}

// Every key rejects a bad value with an error naming the key, the problem and the line.
func TestBadValues(t *testing.T) {
	tested := checkBadValues(t, []badValue{
		{"server.url", "http://agent.local/", "want a ws:// or wss:// URL"},
		{"server.url", "ws://", "no host"},
		{"server.urls", "[ws://a/, http://b/]", `item 2: "http://b/": want a ws:// or wss:// URL`},
		{"server.urls", "ws://a/", "want a list"},
		{"server.url", "[a, b]", "want a single value, got a list"},
		{"server.token_file", "{a: b}", "want a single value, got a mapping"},
		{"server.ca_file", "[x]", "want a single value"},
		{"server.cert_file", "[x]", "want a single value"},
		{"server.key_file", "[x]", "want a single value"},
		{"server.server_name", "{x: y}", "want a single value"},
		{"server.insecure_skip_verify", "maybe", `"maybe" is not true or false`},
		{"device.mac", "AA-BB-CC", `"AA-BB-CC" is not a MAC address`},
		{"device.mac", "GG-BB-CC-DD-EE-FF", "is not a MAC address"},
		{"device.interface", "[eth0]", "want a single value"},
		{"device.state_dir", "{}", "want a single value"},
		{"device.language", "fr", `"fr" is not one of zh, en`},
		{"device.language", `""`, "empty; want one of zh, en"},
		{"connection.ping_interval", "20", `"20" is not a duration`},
		{"connection.ping_interval", "0s", "must be positive"},
		{"connection.ping_timeout", "-1s", "must be positive"},
		{"connection.read_limit", "1MB", `"1MB" is not a size`},
		{"connection.read_limit", "100", "out of range 1KiB..1GiB"},
		{"connection.read_limit", "2GiB", "out of range 1KiB..1GiB"},
		{"connection.read_limit", "-1MiB", "out of range"},
		{"connection.handshake_timeout", "soon", "is not a duration"},
		{"connection.register_timeout", "10", "is not a duration"},
		{"connection.backoff_min", "0", "must be positive"},
		{"connection.backoff_max", "1x", "is not a duration"},
		{"connection.backoff_reset", "-30s", "must be positive"},
		{"execution.max_in_flight", "0", "0 is out of range 1..1024"},
		{"execution.max_in_flight", "eight", `"eight" is not a whole number`},
		{"execution.max_queued", "-1", "-1 is out of range 0..65536"},
		{"execution.max_queued", "65537", "65537 is out of range 0..65536"},
		{"execution.tool_timeout", "10", "is not a duration"},
		{"execution.drain_timeout", "-5s", "must be positive"},
		{"execution.tool_timeouts", "[1s]", "want name: value pairs, got a list"},
		{"render.show_thoughts", "sometimes", "is not true or false"},
		{"render.show_thoughts", "yes", `"yes" is not true or false`}, // YAML 1.1's yes is not YAML 1.2's
		{"render.color", "blue", `"blue" is not one of auto, always, never`},
		{"hardware.mode", "real", `"real" is not one of config, sim`},
		{"hardware.sim_latency", "2", `"2" is not a duration`},
		{"hardware.sim_latency", "-1ms", `"-1ms" is negative`},
		{"hardware.speaker.driver", "oss", `"oss" is not one of sim, alsa, pulse, max9744`},
		{"hardware.speaker.device", "[hw:0]", "want a single value, got a list"},
		{"hardware.speaker.control", "{a: b}", "want a single value"},
		{"hardware.speaker.tool", "amixer", `"amixer" is not one of pactl, wpctl`},
		{"hardware.speaker.bus", "[1]", "want a single value"},
		{"hardware.speaker.address", "0x80", "outside the 7-bit I2C address range"},
		{"hardware.speaker.address", "4B", `"4B" is not an I2C address`},
		{"hardware.speaker.start_volume", "101", "out of range 0..100"},
		{"hardware.speaker.optional", "perhaps", "is not true or false"},
		{"hardware.face.driver", "hd44780", `"hd44780" is not one of sim, ssd1306, apa102, ws2812, command`},
		{"hardware.face.connection", "uart", `"uart" is not one of i2c, spi`},
		{"hardware.face.bus", "{}", "want a single value"},
		{"hardware.face.address", "0x03", "outside the 7-bit I2C address range"},
		{"hardware.face.dc_pin", "[GPIO25]", "want a single value"},
		{"hardware.face.size", "64x48", `"64x48" is not one of 128x64, 128x32`},
		{"hardware.face.pixels", "0", "out of range 1..1024"},
		{"hardware.face.brightness", "101", "out of range 1..100"},
		{"hardware.face.command", "show-face", `want a list, e.g. [program, arg], got the value "show-face"`},
		{"hardware.face.command", `[show-face, ""]`, "item 2 is empty"},
		{"hardware.face.optional", "2", "is not true or false"},
		{"hardware.speech.driver", "tts", `"tts" is not one of none, command`},
		{"hardware.speech.command", "{a: b}", "want a list"},
		{"hardware.speech.sentences", "some", "is not true or false"},
		{"hardware.microphone.driver", "oss", `"oss" is not one of none, pulse, alsa, command, file, sim`},
		{"hardware.microphone.device", "[hw:1]", "want a single value"},
		{"hardware.microphone.command", "arecord", "want a list"},
		{"hardware.microphone.file", "{a: b}", "want a single value"},
		{"voice.listen", "always", `"always" is not one of off, vad, button, wake`},
		{"voice.vad.threshold", "loud", `"loud" is not a number`},
		{"voice.vad.threshold", "0", "0 is out of range 1..60"},
		{"voice.vad.min_level", "3", "3 is out of range -96..-1"},
		{"voice.vad.min_speech", "0s", "must be positive"},
		{"voice.vad.silence", "700", "is not a duration"},
		{"voice.vad.max_utterance", "-1s", "must be positive"},
		{"voice.vad.pre_roll", "soon", "is not a duration"},
		{"voice.button", `"GPIO 17"`, `"GPIO 17" is not a GPIO name`},
		{"voice.wake_word", "[hey, robot]", "want a single value"},
		{"voice.stt", "whisper", `"whisper" is not one of server, command, openai`},
		{"voice.stt_command", "pocketsphinx", "want a list"},
		{"voice.openai.base_url", "localhost:8000", "is not an http:// or https:// URL"},
		{"voice.openai.model", "[a]", "want a single value"},
		{"voice.openai.api_key_file", "{}", "want a single value"},
		{"voice.language", "English", `"English" is not a language tag`},
		{"log.level", "verbose", `"verbose" is not one of debug, info, warn, error`},
		{"log.format", "xml", `"xml" is not one of auto, human, text, json`},
		{"hooks.connected", "on-connect", `want a list, e.g. [program, arg], got the value "on-connect"`},
		{"hooks.registered", `[on-registered, ""]`, "item 2 is empty"},
		{"hooks.disconnected", "{a: b}", "want a list"},
		{"hooks.tool_executed", "[[a]]", "item 1: want a single value, got a list"},
		{"hooks.final_reply", "7", "want a list"},
		{"hooks.timeout", "0s", "must be positive"},
		{"opentool.listen", "localhost", `"localhost" is not host:port (e.g. 127.0.0.1:9627)`},
		{"opentool.api_keys_file", "[a, b]", "want a single value"},
		{"opentool.allowed_hosts", "[http://board.lan]", `"http://board.lan" is not a host or host:port`},
		{"opentool.cert_file", "[a, b]", "want a single value"},
		{"opentool.key_file", "{a: b}", "want a single value"},
		{"opentool.max_connections", "0", "out of range 1..65536"},
		{"opentool.read_timeout", "0s", "must be positive"},
		{"opentool.write_timeout", "forever", "is not a duration"},
		{"opentool.idle_timeout", "-1s", "must be positive"},
		{"toolsets.opentool", "http://lamp:9627", "want a list of mappings, one per tool set"},
		{"toolsets.openapi", "{spec: a.yaml}", "want a list of mappings, one per tool set, got a mapping"},
		{"toolsets.mcp", "npx server", "want a list of mappings, one per tool set, got"},
		{"control.socket", "run/control.sock", "is not an absolute path (or off)"},
	})
	// The agent's keys are in builds that run an agent, and their cases with them (agent_test.go).
	agent := map[string]bool{}
	for _, s := range agentKeys() {
		agent[s.key] = true
	}
	for _, s := range settings {
		if !tested[s.key] && !agent[s.key] {
			t.Errorf("no bad-value case for %s", s.key)
		}
	}
}

// A badValue is a value key must refuse with an error containing want.
type badValue struct{ key, value, want string }

// checkBadValues sets each case's key to its value in a file of its own and checks the error
// names the key and its line; it returns the keys tried.
func checkBadValues(t *testing.T, cases []badValue) map[string]bool {
	t.Helper()
	tested := map[string]bool{}
	for _, tc := range cases {
		tested[tc.key] = true
		doc, line := yamlFor(tc.key, tc.value)
		err := Parse([]byte(doc), Defaults())
		var ce *Error
		if !errors.As(err, &ce) {
			t.Errorf("%s: %s: got error %v, want a *Error", tc.key, tc.value, err)
			continue
		}
		if ce.Key != tc.key || ce.Line != line || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %s: got %q (key %q, line %d), want key %s, line %d, containing %q", tc.key, tc.value, err, ce.Key, ce.Line, tc.key, line, tc.want)
		}
		if !strings.HasPrefix(err.Error(), tc.key+": ") {
			t.Errorf("%s: %s: message %q does not start with the key", tc.key, tc.value, err)
		}
	}
	return tested
}

func TestStructureErrors(t *testing.T) {
	cases := []struct {
		name, doc, want string
	}{
		{"unknown key", "connection:\n  ping_interval: 1s\n  ping_intervall: 2s\n", "connection.ping_intervall: unknown key (line 3)"},
		{"unknown section", "servers:\n  url: ws://x/\n", "servers: unknown key (line 1)"},
		{"unknown nested", "server:\n  tls:\n    ca: x\n", "server.tls: unknown key (line 2)"},
		{"key of a value", "hardware:\n  mode:\n    sim: true\n", "hardware.mode: want a single value, got a mapping (line 3)"},
		{"list of lists", "hardware:\n  face:\n    command: [[a]]\n", "hardware.face.command: item 1: want a single value, got a list (line 3)"},
		{"section as value", "server: ws://x/\n", "server: want keys under it, got the value \"ws://x/\" (line 1)"},
		{"duplicate", "log:\n  level: info\n  level: debug\n", "log.level: duplicate key (first at line 2) (line 3)"},
		{"duplicate section", "log:\n  level: info\nlog:\n  format: json\n", "log: duplicate key (first at line 1) (line 3)"},
		{"duplicate tool", "execution:\n  tool_timeouts:\n    get_device_status: 1s\n    get_device_status: 2s\n", "execution.tool_timeouts.get_device_status: duplicate key (first at line 3) (line 4)"},
		{"unknown tool", "execution:\n  tool_timeouts:\n    get_devise_status: 1s\n", "execution.tool_timeouts.get_devise_status: no such tool (the tools are amplify_volume, set_virtual_human_expression, get_device_status) (line 3)"},
		{"bad tool timeout", "execution:\n  tool_timeouts:\n    get_device_status: soon\n", `execution.tool_timeouts.get_device_status: "soon" is not a duration (e.g. 500ms, 20s, 1m30s) (line 3)`},
		{"empty tool timeout", "execution:\n  tool_timeouts:\n    get_device_status:\n", "execution.tool_timeouts.get_device_status: want a single value, got nothing (line 3)"},
		{"not a mapping", "- a\n- b\n", "line 1: want sections such as server: and device:, got a list"},
		{"not yaml", "server: [\n", "yaml: "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Parse([]byte(tc.doc), Defaults())
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Errorf("got %T, want a *Error", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %q, want %q", err, tc.want)
			}
		})
	}
}

func TestAliasesResolve(t *testing.T) {
	doc := "connection:\n  ping_interval: &t 3s\n  ping_timeout: *t\n"
	c := Defaults()
	if err := Parse([]byte(doc), c); err != nil {
		t.Fatal(err)
	}
	if c.Connection.PingTimeout != 3*time.Second {
		t.Errorf("ping_timeout = %s, want 3s through the alias", c.Connection.PingTimeout)
	}
}

// "hardware: sim", as the first configs wrote it, still means hardware.mode sim.
func TestHardwareScalar(t *testing.T) {
	c := Defaults()
	if err := Parse([]byte("hardware: sim\n"), c); err != nil || c.Hardware.Mode != "sim" {
		t.Errorf("hardware: sim gave mode %q, %v", c.Hardware.Mode, err)
	}
	err := Parse([]byte("hardware: alsa\n"), Defaults())
	if err == nil || err.Error() != `hardware: "alsa" is not one of config, sim (line 1)` {
		t.Errorf("hardware: alsa gave %v", err)
	}
}

func TestCheck(t *testing.T) {
	cases := []struct {
		name   string
		modify func(c *Config)
		want   string // "" = valid
	}{
		{"defaults", func(*Config) {}, ""},
		{"backoff inverted", func(c *Config) { c.Connection.BackoffMin = time.Minute }, "connection.backoff_min: 1m0s is greater than connection.backoff_max (30s)"},
		{"backoff equal", func(c *Config) { c.Connection.BackoffMin = c.Connection.BackoffMax }, ""},
		{"cert without key", func(c *Config) { c.Server.CertFile = "c.pem" }, "server.cert_file: server.cert_file and server.key_file go together"},
		{"key without cert", func(c *Config) { c.Server.KeyFile = "k.pem" }, "server.key_file go together"},
		{"both", func(c *Config) { c.Server.CertFile, c.Server.KeyFile = "c.pem", "k.pem" }, ""},
		{"max9744 address", func(c *Config) { c.Hardware.Speaker.Driver, c.Hardware.Speaker.Address = "max9744", 0x3C }, "hardware.speaker.address: 0x3C: a MAX9744 answers at 0x49, 0x4A or 0x4B"},
		{"max9744 default address", func(c *Config) { c.Hardware.Speaker.Driver = "max9744" }, ""},
		{"face command unset", func(c *Config) { c.Hardware.Face.Driver = "command" }, "hardware.face.command: hardware.face.driver is command but no command is set"},
		{"ssd1306 spi without dc", func(c *Config) { c.Hardware.Face.Driver, c.Hardware.Face.Connection = "ssd1306", "spi" }, "hardware.face.dc_pin: an SSD1306 on SPI needs its data/command GPIO"},
		{"sim mode ignores the parts", func(c *Config) { c.Hardware.Mode, c.Hardware.Face.Driver = "sim", "command" }, ""},
	}
	for _, tc := range cases {
		c := Defaults()
		tc.modify(c)
		err := c.Check()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestSizes(t *testing.T) {
	good := []struct {
		in   string
		want int64
	}{
		{"1MiB", 1 << 20}, {"512KiB", 512 << 10}, {"1048576", 1 << 20}, {"2048B", 2048},
		{"1GiB", 1 << 30}, {"1KiB", 1024}, {" 4 MiB ", 4 << 20}, {"1024", 1024},
	}
	for _, tc := range good {
		got, err := parseSize(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "MiB", "1MB", "1 mb", "1.5MiB", "1023", "1025MiB", "9223372036854775807GiB", "0x400", "-1"} {
		if got, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) = %d, want an error", in, got)
		}
	}
	for n, want := range map[int64]string{1 << 20: "1MiB", 512 << 10: "512KiB", 1 << 30: "1GiB", 1536: "1536", 1000: "1000"} {
		if got := formatSize(n); got != want {
			t.Errorf("formatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

// newFlags returns a flag set with the config flags of `devicectl run`.
func newFlags() *pflag.FlagSet {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.SetOutput(new(bytes.Buffer))
	fs.String("config", "", "")
	BindFlags(fs, Defaults(), "server", "mac", "interface", "state-dir", "language", "hardware",
		"ping-interval", "show-thoughts", "color", "log-level", "log-format")
	return fs
}

// Flags win over the file, the file over the defaults.
func TestPrecedence(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "devicectl.yaml")
	doc := "server:\n  url: ws://file.example/\ndevice:\n  language: en\nconnection:\n  ping_interval: 5s\n  ping_timeout: 3s\nlog:\n  level: warn\n"
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	fs := newFlags()
	err := fs.Parse([]string{"--config", path, "--server", "ws://flag.example/", "--ping-interval", "1s", "--mac", "aabbccddeeff", "--show-thoughts"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := Resolve(path, fs)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		what      string
		got, want any
	}{
		{"server.url (flag over file)", c.Server.URL, "ws://flag.example/"},
		{"ping_interval (flag over file)", c.Connection.PingInterval, time.Second},
		{"ping_timeout (file over default)", c.Connection.PingTimeout, 3 * time.Second},
		{"language (file over default)", c.Device.Language, "en"},
		{"log.level (file over default)", c.Log.Level, slog.LevelWarn},
		{"mac (flag, normalised)", c.Device.MAC, "AA-BB-CC-DD-EE-FF"},
		{"show_thoughts (bool flag without value)", c.Render.ShowThoughts, true},
		{"backoff_max (default)", c.Connection.BackoffMax, 30 * time.Second},
		{"log.format (default)", c.Log.Format, "auto"},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.what, ch.got, ch.want)
		}
	}
}

// A bad flag fails when parsed, naming the flag.
func TestBadFlags(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--ping-interval", "fast"}, `invalid argument "fast" for "--ping-interval" flag: "fast" is not a duration`},
		{[]string{"--ping-interval=-1s"}, `"--ping-interval" flag: "-1s" must be positive`},
		{[]string{"--mac", "nope"}, `"--mac" flag: "nope" is not a MAC address`},
		{[]string{"--server", "http://x/"}, `"--server" flag: "http://x/": want a ws:// or wss:// URL`},
		{[]string{"--language", "de"}, `"--language" flag: "de" is not one of zh, en`},
		{[]string{"--hardware", "alsa"}, `"--hardware" flag: "alsa" is not one of config, sim`},
		{[]string{"--log-level", "loud"}, `"--log-level" flag: "loud" is not one of debug, info, warn, error`},
		{[]string{"--show-thoughts=perhaps"}, `"--show-thoughts" flag: "perhaps" is not true or false`},
		{[]string{"--color", "pink"}, `"--color" flag`},
	}
	for _, tc := range cases {
		err := newFlags().Parse(tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.args, err, tc.want)
		}
	}
}

func TestLoadConfigFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(path, []byte("connection:\n  ping_intervall: 1s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if want := path + ": connection.ping_intervall: unknown key (line 2)"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
	var ce *Error
	if !errors.As(err, &ce) {
		t.Errorf("error %v does not wrap a *Error", err)
	}

	_, err = Load(filepath.Join(dir, "missing.yaml"))
	if !errors.As(err, &ce) || ce.Key != "--config" {
		t.Errorf("missing file: got %v, want a --config error", err)
	}
}

func TestLoadToken(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil { // umask
			t.Fatal(err)
		}
		return p
	}
	private := write("private", "s3cret\n", 0o600)
	shared := write("shared", "s3cret", 0o644)
	empty := write("empty", " \n", 0o600)
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == TokenEnv {
				return v
			}
			return ""
		}
	}
	cases := []struct {
		name    string
		file    string
		env     string
		want    string
		wantErr string
		wantLog string
	}{
		{name: "none"},
		{name: "env", env: " from-env ", want: "from-env"},
		{name: "file", file: private, want: "s3cret"},
		{name: "file wins over env", file: private, env: "from-env", want: "s3cret", wantLog: "using server.token_file"},
		{name: "readable by others", file: shared, want: "s3cret", wantLog: "readable by group or others"},
		{name: "empty file", file: empty, wantErr: "server.token_file: " + empty + " is empty"},
		{name: "missing file", file: filepath.Join(dir, "nope"), wantErr: "server.token_file: open "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, nil))
			got, err := LoadToken(ServerConfig{TokenFile: tc.file}, env(tc.env), log)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %q, %v; want error %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
			if tc.wantLog != "" && !strings.Contains(logs.String(), tc.wantLog) {
				t.Errorf("log %q lacks %q", logs.String(), tc.wantLog)
			}
			if tc.wantLog == "" && logs.Len() > 0 {
				t.Errorf("unexpected log %q", logs.String())
			}
			if strings.Contains(logs.String(), "s3cret") || strings.Contains(logs.String(), "from-env") {
				t.Errorf("the token was logged: %q", logs.String())
			}
		})
	}
}

func TestStateDirs(t *testing.T) {
	env := func(vals map[string]string) func(string) string {
		return func(k string) string { return vals[k] }
	}
	got := StateDirs(DeviceConfig{StateDir: "/srv/dc"}, env(nil))
	if !reflect.DeepEqual(got, []string{"/srv/dc"}) {
		t.Errorf("configured: %q", got)
	}
	got = StateDirs(DeviceConfig{}, env(map[string]string{"XDG_STATE_HOME": "/home/u/.state"}))
	if want := []string{systemStateDir, "/home/u/.state/devicectl"}; !reflect.DeepEqual(got, want) {
		t.Errorf("auto with XDG_STATE_HOME: %q, want %q", got, want)
	}

	dir := t.TempDir()
	notADir := filepath.Join(dir, "file")
	if err := os.WriteFile(notADir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	fallback := filepath.Join(dir, "state", "devicectl")
	picked, err := writableDir([]string{filepath.Join(notADir, "devicectl"), fallback})
	if err != nil || picked != fallback {
		t.Errorf("writableDir = %q, %v; want the fallback %q", picked, err, fallback)
	}
	if entries, _ := os.ReadDir(fallback); len(entries) != 0 {
		t.Errorf("the probe left files behind: %v", entries)
	}
	if _, err := writableDir([]string{filepath.Join(notADir, "x")}); err == nil {
		t.Error("writableDir with no usable directory succeeded")
	}
}

// Whatever the file holds, parsing fails with a *Error or yields values that read back.
func FuzzParseConfig(f *testing.F) {
	example, err := os.ReadFile("../../configs/devicectl.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(example))
	f.Add("connection:\n  read_limit: 512KiB\n  ping_interval: 1m30s\nexecution:\n  tool_timeouts: {a: 1s}\n")
	f.Add("server: {url: wss://x:1/p, insecure_skip_verify: true}\ndevice: {mac: aabbccddeeff}\n")
	f.Fuzz(func(t *testing.T, doc string) {
		c := Defaults()
		if err := Parse([]byte(doc), c); err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %v (%T) is not a *Error", err, err)
			}
			return
		}
		for _, s := range settings {
			if s.set == nil {
				continue
			}
			if v := s.get(c); v != "" {
				if err := s.set(Defaults(), v); err != nil {
					t.Errorf("%s: the accepted value %q does not read back: %v", s.key, v, err)
				}
			}
		}
	})
}

// Two keys with one flag name would bind whichever comes first to a command's flag.
func TestFlagNamesUnique(t *testing.T) {
	seen := map[string]string{}
	for _, s := range settings {
		if s.flag == "" {
			continue
		}
		if other, dup := seen[s.flag]; dup {
			t.Errorf("--%s is the flag of both %s and %s", s.flag, other, s.key)
		}
		seen[s.flag] = s.key
	}
}

// server.urls is a list in the file and URLs separated by commas on the command line (--servers);
// with server.url too, the config is refused.
func TestServers(t *testing.T) {
	c := Defaults()
	if err := Parse([]byte("server:\n  urls: [ws://a:1/, 'wss://b:2/x']\n"), c); err != nil {
		t.Fatal(err)
	}
	if got := c.Server.Servers(); !slices.Equal(got, []string{"ws://a:1/", "wss://b:2/x"}) {
		t.Errorf("Servers() = %q", got)
	}
	if err := c.Check(); err != nil {
		t.Errorf("Check: %v", err)
	}
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	BindFlags(fs, Defaults(), "servers")
	if err := fs.Parse([]string{"--servers", "ws://c:3/, ws://d:4/"}); err != nil {
		t.Fatal(err)
	}
	if err := ApplyFlags(fs, c); err != nil {
		t.Fatal(err)
	}
	if got := c.Server.Servers(); !slices.Equal(got, []string{"ws://c:3/", "ws://d:4/"}) {
		t.Errorf("after --servers, Servers() = %q", got)
	}
	if err := fs.Parse([]string{"--servers", "ws://c:3/,ftp://d/"}); err == nil || !strings.Contains(err.Error(), "item 2") {
		t.Errorf("--servers with a bad second URL: %v; want item 2 named", err)
	}
	c.Server.URL = "ws://e:5/"
	var ce *Error
	if err := c.Check(); !errors.As(err, &ce) || ce.Key != "server.urls" || !strings.Contains(err.Error(), "both set") {
		t.Errorf("server.url and server.urls both set: Check = %v", err)
	}
	if got := (ServerConfig{URL: "ws://e:5/"}).Servers(); !slices.Equal(got, []string{"ws://e:5/"}) {
		t.Errorf("server.url alone: Servers() = %q", got)
	}
}
