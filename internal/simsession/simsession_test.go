//go:build !devicectl_omit_serve || !devicectl_omit_sim

package simsession_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/faces"
	"github.com/devicectl/devicectl/internal/console"
	"github.com/devicectl/devicectl/internal/simsession"
	"github.com/devicectl/devicectl/internal/testing/leakcheck"
)

// TestMain fails the package if a session leaves goroutines behind once Run has returned.
func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m)) }

// What the session shows, line by line, independent of the exact wording of the tools and the
// planner's replies.
func TestScript(t *testing.T) {
	leakcheck.Check(t)
	script := strings.Join([]string{
		`把音量调到30`,
		`笑一个`,
		`大声一点`,
		`你现在状态怎么样`,
		`call amplify_volume {"level": 80}`,
		`call set_virtual_human_expression {"expression": "smile"}`,
		`say 你好，世界`,
		`tools`,
		`call amplify_volume {"level": 150}`,
		`call amplify_volume {oops`,
		`call`,
		`say`,
		``,
		`# a comment`,
		`call amplify_volume {"level": 7}`,
		`frobnicate the widget`,
	}, "\n") // no quit: the end of input ends the session
	var stdout, stderr bytes.Buffer
	err := simsession.Run(t.Context(), &simsession.Options{Config: simsession.Defaults(), Version: "test",
		In: strings.NewReader(script), Out: &stdout, Err: &stderr})
	if err != nil {
		t.Fatalf("Run: %v; stderr %q", err, stderr.String())
	}
	lines := strings.Split(stdout.String(), "\n")
	next := 0
	// expect finds want as a line (or a line's prefix) after the previous match.
	expect := func(want string) string {
		t.Helper()
		for i := next; i < len(lines); i++ {
			if strings.HasPrefix(lines[i], want) {
				next = i + 1
				return lines[i]
			}
		}
		t.Fatalf("no line starting %q after line %d in:\n%s", want, next, stdout.String())
		return ""
	}

	// Said to the agent: the volume bar changes, then the device shows the reply.
	expect(`sim> 把音量调到30`)
	expect("    volume " + console.VolumeBar(30) + "  30%   face idle")
	if reply := lines[next]; !strings.Contains(reply, "30") || strings.HasPrefix(reply, "sim> ") {
		t.Errorf("the reply to 把音量调到30 is %q, want a line saying 30", reply)
	}
	expect(`sim> 笑一个`)
	for line := range strings.Lines(faces.TerminalFace(hal.Smile)) {
		if line = strings.TrimSuffix(line, "\n"); line != "" {
			expect("    " + line)
		}
	}
	expect("    volume " + console.VolumeBar(30) + "  30%   face smile")
	expect(`sim> 大声一点`)
	expect("    volume " + console.VolumeBar(40) + "  40%   face smile")
	expect(`sim> 你现在状态怎么样`)
	if reply := lines[next]; !strings.Contains(reply, "40") {
		t.Errorf("the status reply %q does not give the volume 40", reply)
	}

	expect(`sim> call amplify_volume {"level": 80}`)
	expect("    volume " + console.VolumeBar(80) + "  80%   face smile")
	resp := decodeResponse(t, expect(`{"jsonrpc":"2.0","id":"tc-`))
	if resp.Result["level"] != 80.0 {
		t.Errorf("amplify_volume result %v, want level 80", resp.Result)
	}

	expect(`sim> call set_virtual_human_expression {"expression": "smile"}`)
	expect(`{"jsonrpc":"2.0","id":"tc-`)

	expect("sim> say 你好，世界")
	if got := expect("你好，世界"); got != "你好，世界" {
		t.Errorf("rendered reply %q", got)
	}

	expect("sim> tools")
	for _, name := range []string{"amplify_volume", "set_virtual_human_expression", "get_device_status"} {
		expect(name)
	}

	expect(`sim> call amplify_volume {"level": 150}`)
	resp = decodeResponse(t, expect(`{"jsonrpc":"2.0","id":"tc-`))
	if resp.Error == nil || resp.Error.Code != -32602 || !strings.Contains(resp.Error.Data.Details, "tool_input.level") {
		t.Errorf("out of range: error %+v, want -32602 naming tool_input.level", resp.Error)
	}
	expect(`sim> call amplify_volume {oops`)
	expect("error: the tool input is not JSON")
	expect("sim> call")
	expect("error: usage: call [MAC] TOOL [JSON]")
	expect("sim> say")
	expect("error: usage: say [MAC] TEXT")
	expect(`sim> call amplify_volume {"level": 7}`)
	expect(`{"jsonrpc":"2.0","id":"tc-`)
	// What the planner does not understand gets an honest reply, not an error.
	expect("sim> frobnicate the widget")
	if reply := lines[next]; reply == "" || strings.HasPrefix(reply, "error:") {
		t.Errorf("the reply to what the planner does not understand is %q", reply)
	}
	if strings.Contains(stdout.String(), "a comment") {
		t.Error("a comment line was echoed")
	}
}

// Cancelling ctx (a signal) ends a session that is waiting for input, without an error.
func TestStopsOnCancel(t *testing.T) {
	leakcheck.Check(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	inR, inW := io.Pipe()
	defer inW.Close()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		defer outW.Close()
		done <- simsession.Run(ctx, &simsession.Options{Config: simsession.Defaults(), Version: "test", In: inR, Out: outW, Err: io.Discard})
	}()
	answered := make(chan struct{})
	go func() {
		defer io.Copy(io.Discard, outR) // the session writes until it ends
		for sc := bufio.NewScanner(outR); sc.Scan(); {
			if strings.Contains(sc.Text(), `"result"`) {
				close(answered)
				return
			}
		}
	}()
	if _, err := io.WriteString(inW, "call amplify_volume {\"level\": 10}\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-answered: // the session is up and waiting for the next line
	case <-time.After(10 * time.Second):
		t.Fatal("no answer to the call within 10s")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run after cancel: %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return within 10s of the cancel")
	}
}

type response struct {
	ID     string         `json:"id"`
	Result map[string]any `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    struct {
			Details string `json:"details"`
		} `json:"data"`
	} `json:"error"`
	JSONRPC string `json:"jsonrpc"`
}

func decodeResponse(t *testing.T, line string) response {
	t.Helper()
	var r response
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	if r.JSONRPC != "2.0" {
		t.Errorf("%q: jsonrpc %q", line, r.JSONRPC)
	}
	return r
}
