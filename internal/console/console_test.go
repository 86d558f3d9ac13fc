package console

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"
	"sync"
	"testing"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/tools"
)

// fakeServer is an agent server with devices that answer from a table, and an agent whose turns
// are scripted.
type fakeServer struct {
	mu      sync.Mutex
	devs    []Device
	volume  map[string]int // per MAC
	said    []string       // "MAC: text"
	turns   []agent.Request
	events  func(agent.Request) []agent.Event // what a turn yields
	arrived chan struct{}                     // closed when a device is added
}

func newFake() *fakeServer {
	return &fakeServer{volume: map[string]int{}, arrived: make(chan struct{})}
}

func (f *fakeServer) add(mac string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.devs = append(f.devs, Device{MAC: mac, Tools: []tools.Declaration{{Name: "amplify_volume", MainType: tools.Remote, SubType: tools.Control}}, Addr: "127.0.0.1:1"})
	close(f.arrived)
	f.arrived = make(chan struct{})
}

func (f *fakeServer) Devices() []Device {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Device(nil), f.devs...)
}

func (f *fakeServer) WaitDevice(ctx context.Context, mac string) (Device, error) {
	for {
		f.mu.Lock()
		arrived := f.arrived
		for _, d := range f.devs {
			if mac == "" || d.MAC == mac {
				f.mu.Unlock()
				return d, nil
			}
		}
		f.mu.Unlock()
		select {
		case <-arrived:
		case <-ctx.Done():
			return Device{}, ctx.Err()
		}
	}
}

func (f *fakeServer) Call(_ context.Context, mac, tool string, input json.RawMessage) (json.RawMessage, error) {
	switch tool {
	case "evil":
		return nil, errors.New("device answered \"\x1b]0;pwned\x07\x1b[2J\x1b[H\u009b31m\u202eexe.txt\"")
	case "amplify_volume":
	default:
		return nil, errors.New("no answer")
	}
	var in struct{ Level int }
	if err := json.Unmarshal(input, &in); err != nil || in.Level > 100 {
		return json.RawMessage(`{"id":"1","error":{"code":-32602,"message":"Invalid params","data":{"details":"tool_input.level: out of range"}},"jsonrpc":"2.0"}`), nil
	}
	f.mu.Lock()
	f.volume[mac] = in.Level
	f.mu.Unlock()
	return json.RawMessage(fmt.Sprintf(`{"id": "1", "result": {"status": "success", "level": %d}, "jsonrpc": "2.0"}`, in.Level)), nil
}

func (f *fakeServer) Say(_ context.Context, mac, text string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.said = append(f.said, mac+": "+text)
	return nil
}

func (f *fakeServer) Turn(_ context.Context, r agent.Request) iter.Seq[agent.Event] {
	f.mu.Lock()
	f.turns = append(f.turns, r)
	f.mu.Unlock()
	return func(yield func(agent.Event) bool) {
		for _, e := range f.events(r) {
			if !yield(e) {
				return
			}
		}
	}
}

// A script runs line by line as a transcript: each line after the prompt, then what it did; a
// failing line says why and the console goes on; quit ends it before the rest.
func TestConsoleScript(t *testing.T) {
	srv := newFake()
	var out bytes.Buffer
	c := &Console{Server: srv, Out: NewSyncWriter(&out), Prompt: "t> ", Help: "the help\n"}

	if err := c.Exec(t.Context(), "tools"); err == nil || err.Error() != "no device is registered yet" {
		t.Errorf("tools with no device: %v", err)
	}
	srv.add("AA-BB-CC-DD-EE-01")
	out.Reset()
	script := strings.Join([]string{
		"help",
		"# a comment, and a blank line",
		"",
		`call amplify_volume {"level": 30}`,
		`call aa:bb:cc:dd:ee:01 amplify_volume {"level": 31}`,
		`call amplify_volume {"level": 150}`,
		`call set_volume {}`,
		`call amplify_volume {oops`,
		"call",
		"say hello",
		"say",
		"wait",
		"devices",
		"quit",
		"say never",
	}, "\n")
	if err := c.Run(t.Context(), strings.NewReader(script)); err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := `t> help
the help
t> call amplify_volume {"level": 30}
{"id":"1","result":{"status":"success","level":30},"jsonrpc":"2.0"}
t> call aa:bb:cc:dd:ee:01 amplify_volume {"level": 31}
{"id":"1","result":{"status":"success","level":31},"jsonrpc":"2.0"}
t> call amplify_volume {"level": 150}
{"id":"1","error":{"code":-32602,"message":"Invalid params","data":{"details":"tool_input.level: out of range"}},"jsonrpc":"2.0"}
t> call set_volume {}
error: no answer
t> call amplify_volume {oops
error: the tool input is not JSON: invalid character 'o' looking for beginning of object key string
t> call
error: usage: call [MAC] TOOL [JSON]
t> say hello
sent to AA-BB-CC-DD-EE-01
t> say
error: usage: say [MAC] TEXT
t> wait
AA-BB-CC-DD-EE-01 is registered
t> devices
AA-BB-CC-DD-EE-01  1 tools  127.0.0.1:1
t> quit
`
	if got := out.String(); got != want {
		t.Errorf("transcript:\n%s\nwant:\n%s", got, want)
	}
	if v := srv.volume["AA-BB-CC-DD-EE-01"]; v != 31 {
		t.Errorf("volume %d, want 31", v)
	}
	if strings.Join(srv.said, "|") != "AA-BB-CC-DD-EE-01: hello" {
		t.Errorf("said %q", srv.said)
	}

	// With two devices, a command must name one.
	srv.add("AA-BB-CC-DD-EE-02")
	err := c.Exec(t.Context(), "tools")
	if err == nil || !strings.Contains(err.Error(), "2 devices are registered (AA-BB-CC-DD-EE-01, AA-BB-CC-DD-EE-02): put the MAC first") {
		t.Errorf("tools with two devices: %v", err)
	}
	// With many, it names a few and counts the rest: a serve with 201 devices is one line.
	many := newFake()
	for i := range 201 {
		many.add(fmt.Sprintf("02-DC-00-00-%02X-%02X", i>>8, i&0xff))
	}
	err = (&Console{Server: many, Out: NewSyncWriter(io.Discard)}).Exec(t.Context(), "tools")
	wantMany := "201 devices are registered (02-DC-00-00-00-00, 02-DC-00-00-00-01, 02-DC-00-00-00-02 and 198 more; devices lists them): put the MAC first"
	if err == nil || err.Error() != wantMany {
		t.Errorf("tools with 201 devices: %v\nwant %s", err, wantMany)
	}
	if err := c.Exec(t.Context(), "tools AA-BB-CC-DD-EE-09"); err == nil || err.Error() != "no device AA-BB-CC-DD-EE-09 is registered" {
		t.Errorf("tools of an unknown MAC: %v", err)
	}
	out.Reset()
	if err := c.Exec(t.Context(), "tools AA-BB-CC-DD-EE-02"); err != nil || !strings.Contains(out.String(), "amplify_volume") {
		t.Errorf("tools of a MAC: %v, %q", err, out.String())
	}
}

// A line that is not a command is said to the agent; shown, its tool calls are lines and the
// reply streams onto one line; not shown (sim), only an error is printed.
func TestConsoleTurn(t *testing.T) {
	srv := newFake()
	srv.add("AA-BB-CC-DD-EE-01")
	srv.events = func(r agent.Request) []agent.Event {
		switch r.Text {
		case "把音量调到30":
			return []agent.Event{
				{Kind: agent.EventToolCall, Tool: "amplify_volume", Input: json.RawMessage(`{"level": 30}`)},
				{Kind: agent.EventToolResult, Tool: "amplify_volume", Result: json.RawMessage(`{"status":"success"}`)},
				{Kind: agent.EventChunk, Text: "好的，"},
				{Kind: agent.EventChunk, Text: "音量已调到 30。"},
				{Kind: agent.EventFinal, Text: "好的，音量已调到 30。"},
			}
		case "bad":
			return []agent.Event{
				{Kind: agent.EventToolCall, Tool: "amplify_volume", Input: json.RawMessage(`{"level":150}`)},
				{Kind: agent.EventToolResult, Tool: "amplify_volume", Err: &agent.ToolError{Code: -32602, Message: "Invalid params", Details: "tool_input.level"}},
				{Kind: agent.EventFinal, Text: "no"},
			}
		case "gone":
			return []agent.Event{{Kind: agent.EventChunk, Text: "half"}, {Kind: agent.EventError, Err: agent.ErrDeviceGone}}
		}
		return nil // a turn that ends without its final
	}
	var out bytes.Buffer
	c := &Console{Server: srv, Out: NewSyncWriter(&out), Prompt: "t> ", ShowReply: true, UserID: "u1", SessionID: "s1"}
	script := "把音量调到30\nbad\ngone\naa-bb-cc-dd-ee-01 silent\n"
	if err := c.Run(t.Context(), strings.NewReader(script)); !errors.Is(err, io.EOF) {
		t.Fatalf("Run: %v", err)
	}
	want := `t> 把音量调到30
→ amplify_volume {"level":30}
← amplify_volume {"status":"success"}
好的，音量已调到 30。
t> bad
→ amplify_volume {"level":150}
← amplify_volume {"error":{"code":-32602,"message":"Invalid params","data":{"details":"tool_input.level"}}}
no
t> gone
half
error: agent: the device disconnected
t> aa-bb-cc-dd-ee-01 silent
error: the turn ended without a reply
`
	if got := out.String(); got != want {
		t.Errorf("transcript:\n%s\nwant:\n%s", got, want)
	}
	last := srv.turns[len(srv.turns)-1]
	if last != (agent.Request{Text: "silent", MAC: "AA-BB-CC-DD-EE-01", UserID: "u1", SessionID: "s1"}) {
		t.Errorf("the last turn's request %+v: want the MAC taken off the text", last)
	}

	// Not shown: the device shows the reply; the console waits for it.
	out.Reset()
	waited := 0
	c = &Console{Server: srv, Out: NewSyncWriter(&out), Prompt: "t> ", AfterReply: func(context.Context) error { waited++; return nil }}
	if err := c.Run(t.Context(), strings.NewReader("把音量调到30\ngone\n")); !errors.Is(err, io.EOF) {
		t.Fatalf("Run: %v", err)
	}
	if got, want := out.String(), "t> 把音量调到30\nt> gone\nerror: agent: the device disconnected\n"; got != want || waited != 1 {
		t.Errorf("output %q after %d waits, want %q after 1", got, waited, want)
	}
}

// In a terminal the prompt comes before each read and the end of input ends the line; the end
// of input is io.EOF, a cancelled context nil.
func TestConsoleInteractive(t *testing.T) {
	srv := newFake()
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

// Devices are shown as they come and go, over the prompt in a terminal.
func TestConsoleEvents(t *testing.T) {
	var b bytes.Buffer
	d := Device{MAC: "AA-BB-CC-DD-EE-03", Tools: make([]tools.Declaration, 3), Addr: "127.0.0.1:5"}
	c := &Console{Out: NewSyncWriter(&b), Prompt: "t> "}
	c.Event(Registered, d)
	if got, want := b.String(), "+ AA-BB-CC-DD-EE-03 registered 3 tools from 127.0.0.1:5\n"; got != want {
		t.Errorf("event %q, want %q", got, want)
	}
	b.Reset()
	c.Interactive = true
	c.Event(Disconnected, d)
	if got, want := b.String(), "\r- AA-BB-CC-DD-EE-03 disconnected\nt> "; got != want {
		t.Errorf("event in a terminal: %q, want %q", got, want)
	}
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

// Nothing a peer sends reaches the terminal as a control: a tool's name and description, a
// device's answer and error, the agent's reply and its tool calls, a device's MAC and address
// are printed with their escapes shown, not obeyed.
func TestConsolePeerTextSanitised(t *testing.T) {
	const (
		osc   = "\x1b]0;pwned\x07"      // sets the window title
		clear = "\x1b[2J\x1b[H"         // clears the screen
		c1    = "\u009b31m"             // CSI as one C1 character
		bidi  = "\u202eexe.txt"         // reorders what follows
		evil  = osc + clear + c1 + bidi // all of them
	)
	srv := newFake()
	srv.mu.Lock()
	srv.devs = append(srv.devs, Device{MAC: "AA-BB-CC-DD-EE-01", Addr: "127.0.0.1:1" + evil, Tools: []tools.Declaration{
		{Name: "amplify_volume" + evil, MainType: tools.Remote, SubType: tools.Control, Description: "Sets the volume." + evil},
	}})
	srv.mu.Unlock()
	srv.events = func(agent.Request) []agent.Event {
		return []agent.Event{
			{Kind: agent.EventToolCall, Tool: "t" + evil, Input: json.RawMessage(`{"a":"` + bidi + `"}`)},
			{Kind: agent.EventToolResult, Tool: "t" + evil, Result: json.RawMessage(`{"a":"` + c1 + `"}`)},
			{Kind: agent.EventToolResult, Tool: "t", Err: &agent.ToolError{Code: -32000, Message: "m" + evil, Details: "d" + evil}},
			{Kind: agent.EventToolResult, Tool: "t", Err: errors.New("e" + evil)},
			{Kind: agent.EventChunk, Text: "reply" + evil},
			{Kind: agent.EventError, Err: errors.New("failed" + evil)},
		}
	}
	var out bytes.Buffer
	c := &Console{Server: srv, Out: NewSyncWriter(&out), Prompt: "t> ", ShowReply: true}
	script := "tools\ndevices\ncall evil\nsay hi\nhello\n"
	if err := c.Run(t.Context(), strings.NewReader(script)); !errors.Is(err, io.EOF) {
		t.Fatalf("Run: %v", err)
	}
	c.Event(Registered, Device{MAC: "AA" + evil, Addr: evil})
	c.Event(Disconnected, Device{MAC: "AA" + evil})
	c.Heard("AA"+evil, "set the volume"+evil, "voice")
	got := out.String()
	if i := strings.IndexAny(got, "\x1b\x07\u009b\u202e\r"); i >= 0 {
		t.Fatalf("a control reached the terminal at byte %d:\n%q", i, got)
	}
	shown := `\x1b]0;pwned\x07\x1b[2J\x1b[H\u009b31m\u202eexe.txt`
	for _, want := range []string{
		"AA" + shown + " heard: set the volume" + shown,
		"amplify_volume" + shown, "Sets the volume." + shown, "127.0.0.1:1" + shown,
		`error: device answered "` + shown, "→ t" + shown + ` {"a":"\u202eexe.txt"}`, `← t` + shown + ` {"a":"\u009b31m"}`,
		`"message":"m\u001b]0;pwned\u0007\u001b[2J\u001b[H\u009b31m\u202eexe.txt"`, "← t error: e" + shown, "reply" + shown, "error: failed" + shown,
		"+ AA" + shown + " registered 0 tools from " + shown, "- AA" + shown + " disconnected",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the output does not show %q:\n%s", want, got)
		}
	}
}

// With several devices, a line said to the agent that names none is told how to name one at
// the console (a MAC first), not the A2A field the agent's own error speaks of; the line that
// follows the hint reaches the device.
func TestConsoleTurnSeveralDevices(t *testing.T) {
	srv := newFake()
	srv.add("AA-BB-CC-DD-EE-01")
	srv.add("AA-BB-CC-DD-EE-02")
	srv.events = func(r agent.Request) []agent.Event {
		if r.MAC == "" {
			return []agent.Event{{Kind: agent.EventError, Err: &agent.DeviceChoiceError{MACs: []string{"AA-BB-CC-DD-EE-01", "AA-BB-CC-DD-EE-02"}}}}
		}
		return []agent.Event{{Kind: agent.EventFinal, Text: "ok " + r.MAC}}
	}
	var out bytes.Buffer
	c := &Console{Server: srv, Out: NewSyncWriter(&out), Prompt: "serve> ", ShowReply: true}
	err := c.Exec(t.Context(), "turn it down")
	want := "2 devices are registered (AA-BB-CC-DD-EE-01, AA-BB-CC-DD-EE-02): start the line with the MAC of the one to talk to, e.g. AA-BB-CC-DD-EE-01 turn it down"
	if err == nil || err.Error() != want || strings.Contains(err.Error(), "metadata") {
		t.Fatalf("a turn on no device of two: %v\nwant %s", err, want)
	}
	hint := strings.TrimPrefix(want[strings.Index(want, "e.g. "):], "e.g. ")
	if err := c.Exec(t.Context(), hint); err != nil || !strings.Contains(out.String(), "ok AA-BB-CC-DD-EE-01\n") {
		t.Errorf("the line the hint suggests: %v, %q", err, out.String())
	}
}
