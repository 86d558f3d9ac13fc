package device_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/hal/sim"
	"github.com/devicectl/devicectl/internal/testing/logbuf"
	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
)

var update = flag.Bool("update", false, "rewrite the expected frames of testdata/conformance from what the device sends")

// TestConformance replays the scripts under testdata/conformance against a real agent over a real
// WebSocket on loopback. A script is a list of steps, one a line:
//
//	# comment
//	> FRAME          the server sends FRAME (a text frame)
//	>binary FRAME    the server sends FRAME as a binary frame
//	< FRAME          the device must send FRAME next (compared as JSON values)
//	render "TEXT"    what the device has rendered so far (a JSON string)
//	text PARAMS      the device sends what it heard as text (Agent.UserText with PARAMS)
//	audio N          the device sends an utterance of N samples (Agent.UserAudio, lang "en")
//	interrupt        the device says the person spoke over the reply (Agent.Interrupt)
//	answer JSON      what the oldest text, audio or interrupt returned: {"result":...} or {"error":"..."}
//
// The first frame of every script is the device's mcp/registerTools; its id is the device's own
// ("reg-1"), and the scripts answer with that id. Run with -update to rewrite the "<" lines.
func TestConformance(t *testing.T) {
	files, err := filepath.Glob("testdata/conformance/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no conformance scripts: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			checkLeaks(t)
			runScript(t, file)
		})
	}
}

func runScript(t *testing.T, file string) {
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	speaker := sim.NewSpeaker(nil)
	face := sim.NewFace(nil)
	reg := seedRegistry(t, speaker, face)
	// Tools beyond the seed's, for the error rows of docs/protocol.md.
	for _, tool := range []*tools.Tool{
		testTool(t, "slow_tool", 50*time.Millisecond, nil, func(ctx context.Context, _ json.RawMessage) (any, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}),
		testTool(t, "panicking_tool", 0, nil, func(context.Context, json.RawMessage) (any, error) {
			panic("a bug in a tool")
		}),
		testTool(t, "numbers", 0, nil, func(context.Context, json.RawMessage) (any, error) {
			return []any{1, "two", 3.5, nil, map[string]any{"ok": true}}, nil
		}),
	} {
		if strings.Contains(string(src), tool.Name) {
			if err := reg.Add(tool); err != nil {
				t.Fatal(err)
			}
		}
	}
	var out logbuf.Buffer
	renderer := device.NewRenderer(&out, &out, &device.RenderOptions{ShowThoughts: true})
	p := newPeer(t)
	a, err := device.New(&device.Options{
		URL:         p.url(),
		MAC:         "aa:bb:cc:dd:ee:ff",
		Registry:    reg,
		Render:      renderer.Render,
		MaxInFlight: 1,
		MaxQueued:   -1, // none wait: errors.txt's -32002 row is the call past the one running
		Sleep:       (&sleeps{}).sleep,
	})
	if err != nil {
		t.Fatal(err)
	}
	stop := runAgent(t, a)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l := p.accept(ctx)

	// The voice steps run on goroutines of their own, as the device's listener does, and their
	// outcomes queue up for the answer steps.
	outcomes := make(chan []byte, 16)
	var voiceCalls sync.WaitGroup
	defer voiceCalls.Wait()
	voiceCall := func(call func() (any, error)) {
		if err := a.WaitState(ctx, device.Registered); err != nil {
			t.Fatal(err)
		}
		voiceCalls.Add(1)
		go func() {
			defer voiceCalls.Done()
			res, err := call()
			var out any = map[string]any{"result": res}
			if err != nil {
				out = map[string]string{"error": err.Error()}
			}
			b, _ := json.Marshal(out)
			outcomes <- b
		}()
	}
	var rewritten bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		keep := text
		verb, arg, _ := strings.Cut(text, " ")
		switch {
		case text == "" || strings.HasPrefix(text, "#"):
		case verb == ">":
			l.send(websocket.MessageText, arg)
		case verb == ">binary":
			l.send(websocket.MessageBinary, arg)
		case verb == "<":
			got := l.recv()
			if *update && !sameJSON(got, []byte(arg)) {
				keep = "< " + string(got) // lines that still match keep their own spelling
			} else if !sameJSON(got, []byte(arg)) {
				t.Errorf("%s:%d: device sent\n\t%s\nwant\n\t%s", file, n, got, arg)
			}
		case verb == "text":
			var p protocol.UserTextParams
			if err := json.Unmarshal([]byte(arg), &p); err != nil {
				t.Fatalf("%s:%d: text wants UserTextParams: %v", file, n, err)
			}
			voiceCall(func() (any, error) { return a.UserText(ctx, p) })
		case verb == "audio":
			count, err := strconv.Atoi(arg)
			if err != nil {
				t.Fatalf("%s:%d: audio wants a number of samples: %v", file, n, err)
			}
			samples := make([]int16, count)
			for i := range samples {
				samples[i] = int16((i + 1) * 1000 * (1 - 2*(i%2)))
			}
			voiceCall(func() (any, error) { return a.UserAudio(ctx, samples, "en") })
		case verb == "interrupt":
			voiceCall(func() (any, error) { return nil, a.Interrupt() })
		case verb == "answer":
			var got []byte
			select {
			case got = <-outcomes:
			case <-ctx.Done():
				t.Fatalf("%s:%d: no answer", file, n)
			}
			if *update && !sameJSON(got, []byte(arg)) {
				keep = "answer " + string(got)
			} else if !sameJSON(got, []byte(arg)) {
				t.Errorf("%s:%d: the call returned\n\t%s\nwant\n\t%s", file, n, got, arg)
			}
		case verb == "render":
			var want string
			if err := json.Unmarshal([]byte(arg), &want); err != nil {
				t.Fatalf("%s:%d: render wants a JSON string: %v", file, n, err)
			}
			waitRendered(t, &out, want, fmt.Sprintf("%s:%d", file, n))
		default:
			t.Fatalf("%s:%d: unknown step %q", file, n, verb)
		}
		rewritten.WriteString(keep + "\n")
	}
	// The stop must end the line with a normal closure; the peer reads meanwhile, as a server
	// would, so the closing handshake completes.
	closed := make(chan error, 1)
	go func() {
		rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer rcancel()
		_, _, err := l.c.Read(rctx)
		closed <- err
	}()
	stop()
	if err := <-closed; websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Errorf("after the stop the line ended with %v, want close status 1000", err)
	}
	if *update {
		if err := os.WriteFile(file, rewritten.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// waitRendered waits until the renderer has written exactly want; rendering happens on the line's
// read loop, after the frame that causes it has been read. It wakes on each write, not by polling.
func waitRendered(t *testing.T, out *logbuf.Buffer, want, where string) {
	t.Helper()
	out.WaitFor(t, fmt.Sprintf("%s: rendering of exactly %q", where, want), func(got string) bool { return got == want })
}

// TestIDsEchoedByteForByte sends executes whose ids JSON-RPC 2.0 allows but a decode and
// re-encode would respell (negative, fractional, exponent, beyond 64 bits, escapes) and checks
// that each answer carries the id exactly as sent: the conformance scripts compare JSON values,
// which would not see 1.50 come back as 1.5.
func TestIDsEchoedByteForByte(t *testing.T) {
	checkLeaks(t)
	l := registeredLine(t, device.Options{})
	for _, id := range []string{`-7`, `-1.50`, `1e3`, `2.5E-3`, `123456789012345678901234567890`, `"\u0041b"`, `"a\/b"`, `""`} {
		for _, frame := range []string{
			`{"jsonrpc":"2.0","method":"mcp/tool/execute","params":{"tool_name":"amplify_volume","tool_input":{"level":4}},"id":` + id + `}`,
			`{"jsonrpc":"2.0","method":"mcp/tool/execute","params":{"tool_name":"amplify_volume","tool_input":{"level":"loud"}},"id":` + id + `}`,
			`{"jsonrpc":"2.0","method":"no/such/method","id":` + id + `}`,
		} {
			l.send(websocket.MessageText, frame)
			raw := l.recv()
			var resp struct {
				ID    json.RawMessage `json:"id"`
				Error *struct{ Code int }
			}
			if err := json.Unmarshal(raw, &resp); err != nil {
				t.Fatalf("answer %s: %v", raw, err)
			}
			if string(resp.ID) != id {
				t.Errorf("id %s answered with id %s: %s", id, resp.ID, raw)
			}
		}
	}
}
