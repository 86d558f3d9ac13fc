package console

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/device/agenttest"
	"github.com/devicectl/devicectl/hal/sim"
	"github.com/devicectl/devicectl/internal/leakcheck"
	"github.com/devicectl/devicectl/tools"
	"github.com/devicectl/devicectl/tools/builtin"
)

// startDevice connects a device with simulated hardware and the built-in tools to srv, and waits
// until the server has it.
func startDevice(t *testing.T, srv *agenttest.Server, mac string) *sim.Speaker {
	t.Helper()
	spk := sim.NewSpeaker(nil)
	reg := tools.NewRegistry()
	if err := builtin.Register(reg, &builtin.Options{Speaker: spk, Face: sim.NewFace(nil)}); err != nil {
		t.Fatal(err)
	}
	a, err := device.New(&device.Options{URL: srv.URL(), MAC: mac, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("agent %s: %v", mac, err)
		}
	})
	if _, err := srv.WaitDevice(t.Context(), mac); err != nil {
		t.Fatal(err)
	}
	return spk
}

func newServer(t *testing.T) *agenttest.Server {
	t.Helper()
	srv, err := agenttest.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// A script runs line by line as a transcript: each line after the prompt, then what it did; a
// failing line says why and the console goes on; quit ends it before the rest.
func TestConsoleScript(t *testing.T) {
	leakcheck.Check(t)
	srv := newServer(t)
	var out bytes.Buffer
	c := &Console{Server: srv, Out: NewSyncWriter(&out), Prompt: "t> ", Help: "the help\n"}

	if err := c.Exec(t.Context(), "tools"); err == nil || err.Error() != "no device is registered yet" {
		t.Errorf("tools with no device: %v", err)
	}
	spk := startDevice(t, srv, "AA-BB-CC-DD-EE-01")
	out.Reset()
	script := strings.Join([]string{
		"help",
		"# a comment, and a blank line",
		"",
		`call amplify_volume {"level": 30}`,
		`call aa:bb:cc:dd:ee:01 amplify_volume {"level": 31}`,
		`call amplify_volume {oops`,
		"call",
		"say hello",
		"wait",
		"frobnicate",
		"quit",
		"say never",
	}, "\n")
	if err := c.Run(t.Context(), strings.NewReader(script)); err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := `t> help
the help
t> call amplify_volume {"level": 30}
{"id":"tool-call-1","result":{"status":"success","message":"音量已成功设置为 30","level":30},"jsonrpc":"2.0"}
t> call aa:bb:cc:dd:ee:01 amplify_volume {"level": 31}
{"id":"tool-call-2","result":{"status":"success","message":"音量已成功设置为 31","level":31},"jsonrpc":"2.0"}
t> call amplify_volume {oops
error: the tool input is not JSON: invalid character 'o' looking for beginning of object key string
t> call
error: usage: call [MAC] TOOL [JSON]
t> say hello
sent to AA-BB-CC-DD-EE-01
t> wait
AA-BB-CC-DD-EE-01 is registered
t> frobnicate
error: unknown command "frobnicate"; type help for the commands
t> quit
`
	if got := out.String(); got != want {
		t.Errorf("transcript:\n%s\nwant:\n%s", got, want)
	}
	if v, err := spk.Volume(t.Context()); err != nil || v != 31 {
		t.Errorf("volume %d, %v; want 31", v, err)
	}

	// With two devices, a command must name one.
	startDevice(t, srv, "AA-BB-CC-DD-EE-02")
	err := c.Exec(t.Context(), "tools")
	if err == nil || !strings.Contains(err.Error(), "2 devices are registered (AA-BB-CC-DD-EE-01, AA-BB-CC-DD-EE-02): put the MAC first") {
		t.Errorf("tools with two devices: %v", err)
	}
	if err := c.Exec(t.Context(), "tools AA-BB-CC-DD-EE-09"); err == nil || err.Error() != "no device AA-BB-CC-DD-EE-09 is registered" {
		t.Errorf("tools of an unknown MAC: %v", err)
	}
	out.Reset()
	if err := c.Exec(t.Context(), "tools AA-BB-CC-DD-EE-02"); err != nil || !strings.Contains(out.String(), "amplify_volume") {
		t.Errorf("tools of a MAC: %v, %q", err, out.String())
	}
}

// In a terminal the prompt comes before each read and the end of input ends the line; the end
// of input is io.EOF, a cancelled context nil.
func TestConsoleInteractive(t *testing.T) {
	leakcheck.Check(t)
	srv := newServer(t)
	var out bytes.Buffer
	c := &Console{Server: srv, Out: NewSyncWriter(&out), Prompt: "t> ", Interactive: true}
	if err := c.Run(t.Context(), strings.NewReader("devices\n")); err != io.EOF {
		t.Errorf("Run at the end of input: %v, want io.EOF", err)
	}
	if got, want := out.String(), "t> no device is registered\nt> \n"; got != want {
		t.Errorf("output %q, want %q", got, want)
	}

	ctx, cancel := context.WithCancel(t.Context())
	r, w := io.Pipe()
	defer w.Close()
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, r) }()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after a cancel: %v, want nil", err)
	}
}

// WatchEvents shows devices as they come and go, over the prompt in a terminal.
func TestConsoleEvents(t *testing.T) {
	leakcheck.Check(t)
	srv := newServer(t)
	out := chanWriter(make(chan string, 8))
	c := &Console{Server: srv, Out: NewSyncWriter(out), Prompt: "t> "}
	stop := c.WatchEvents(t.Context())
	defer stop()
	startDevice(t, srv, "AA-BB-CC-DD-EE-03")
	select {
	case got := <-out:
		if want := "+ AA-BB-CC-DD-EE-03 registered 3 tools from 127.0.0.1:"; !strings.HasPrefix(got, want) {
			t.Errorf("event %q, want it to start %q", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event for the registration")
	}
	stop()

	var b bytes.Buffer
	c = &Console{Out: NewSyncWriter(&b), Prompt: "t> ", Interactive: true}
	c.Event(agenttest.Event{Kind: agenttest.Disconnected, Device: &agenttest.Device{MAC: "AA-BB-CC-DD-EE-03"}})
	if got, want := b.String(), "\r- AA-BB-CC-DD-EE-03 disconnected\nt> "; got != want {
		t.Errorf("event in a terminal: %q, want %q", got, want)
	}
}

// chanWriter hands each write to the test.
type chanWriter chan string

func (w chanWriter) Write(p []byte) (int, error) {
	w <- string(p)
	return len(p), nil
}

func TestCutWord(t *testing.T) {
	for in, want := range map[string][2]string{
		"":                  {"", ""},
		"  call  ":          {"call", ""},
		"call x {\"a\": 1}": {"call", "x {\"a\": 1}"},
		"say\t 你好 世界 ":      {"say", "你好 世界"},
	} {
		if w, r := cutWord(in); w != want[0] || r != want[1] {
			t.Errorf("cutWord(%q) = %q, %q; want %q, %q", in, w, r, want[0], want[1])
		}
	}
}
