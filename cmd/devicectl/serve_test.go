//go:build !devicectl_omit_serve

package main

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/internal/testing/standin"
)

// serve prints devices as they come and go, and its console drives them.
func TestServe(t *testing.T) {
	// A database of its own: the machine's would keep the MAC bound to an earlier run's device.
	srv := startServe(t, nil, "--listen", "127.0.0.1:0", "--state-dir", t.TempDir())
	url, out := srv.url, srv.out
	if !strings.HasPrefix(url, "ws://127.0.0.1:") {
		t.Fatalf("serve listens at %q, want loopback", url)
	}

	dev := startRun(t, "--config", "/dev/null", "--server", url, "--mac", "02-00-00-00-00-07",
		"--state-dir", t.TempDir(), "--log-level", "error")
	out.waitFor(t, "+ 02-00-00-00-00-07 registered 3 tools from 127.0.0.1:")

	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(srv.in, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send("devices")
	out.waitFor(t, "02-00-00-00-00-07  3 tools  127.0.0.1:")
	send(`call 02:00:00:00:00:07 amplify_volume {"level": 64}`)
	out.waitFor(t, `{"jsonrpc":"2.0","id":"tc-1","result":{`)
	send("call 02-00-00-00-00-08 amplify_volume {}")
	out.waitFor(t, "error: no device 02-00-00-00-00-08 is registered")
	send("say hi")
	out.waitFor(t, "sent to 02-00-00-00-00-07")
	send("tools")
	out.waitFor(t, "get_device_status")
	// Said to the agent: the console shows the tool call, its result and the streamed reply.
	send("把音量调到30")
	out.waitFor(t, `→ amplify_volume {"level":30}`)
	// The planner is told "success" at once (agent.wait_for_control false), so the device's own
	// answer may come before, within or after the streamed reply.
	var reply string
	for result := false; !result || reply == ""; {
		line := out.waitFor(t, "")
		switch {
		case strings.HasPrefix(line, `← amplify_volume {"status":"success"`):
			result = true
		case strings.Contains(line, "30") && !strings.HasPrefix(line, "→") && !strings.HasPrefix(line, "←"):
			reply = line
		}
	}
	// The device handles messages in order before the next request: once this call is answered,
	// "hi" and the reply have been shown.
	send("call get_device_status")
	status := out.waitFor(t, `{"jsonrpc":"2.0","id":"tc-`)
	if !strings.Contains(status, `"volume":30`) {
		t.Errorf("get_device_status after 把音量调到30: %s", status)
	}

	if r := dev.stop(); r.code != 0 || r.stdout != "hi\n"+reply+"\n" {
		t.Errorf("device: exit %d, stdout %q; want 0 and the replies %q", r.code, r.stdout, "hi\n"+reply+"\n")
	}
	out.waitFor(t, "- 02-00-00-00-00-07 disconnected")
	send("call amplify_volume {}")
	out.waitFor(t, "error: no device is registered yet")

	send("quit")
	if code := srv.wait(); code != 0 {
		t.Errorf("serve exit %d, want 0", code)
	}
}

// Beyond loopback, serve needs a token for its HTTP API; a bad config fails before it listens.
func TestServeRefuses(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen", "0.0.0.0:0"}, "agent.listen: 0.0.0.0:0 is reachable beyond this machine, and agent.token_file is not set"},
		{[]string{"--planner", "llm", "--llm-model", "m"}, "llm.base_url: agent.planner is llm and llm.base_url is not set"},
		{[]string{"--planner", "oracle"}, `invalid argument "oracle" for "--planner" flag: "oracle" is not one of rules, llm`},
	} {
		r := runCLI(t.Context(), "", append([]string{"serve", "--state-dir", t.TempDir()}, tc.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("serve %q: exit %d, stderr %q; want %d and %q", tc.args, r.code, r.stderr, exitUsage, tc.want)
		}
	}
}

// A flood of refused devices is counted, not written line by line: three lines, then one that
// says how many more there were, written when serve stops at the latest.
func TestServeRefusalFloodCounted(t *testing.T) {
	dir := t.TempDir()
	token := standin.WriteFile(t, "token", "s3cret-token\n")
	cfg := standin.WriteFile(t, "config.yaml", "agent:\n  device_tokens_file: "+token+"\n")
	var log []string // read once serve has stopped
	srv := startServe(t, func(l string) { log = append(log, l) }, "--config", cfg, "--state-dir", dir, "--listen", "127.0.0.1:0")
	const dials = 50
	for range dials {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.api()+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", "websocket")
		req.Header.Set("Sec-WebSocket-Version", "13")
		req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("a dial without the token: %s, want 401", resp.Status)
		}
	}
	if code := srv.stop(); code != 0 {
		t.Errorf("serve exit %d, want 0", code)
	}
	lines, counted := 0, 0
	for _, l := range log {
		if !strings.Contains(l, "device refused: no valid bearer token") {
			continue
		}
		lines++
		if _, n, ok := strings.Cut(l, "suppressed="); ok {
			n, _, _ = strings.Cut(n, " ")
			c, err := strconv.Atoi(strings.TrimSpace(n))
			if err != nil {
				t.Fatalf("summary %q: %v", l, err)
			}
			counted += c
		} else {
			counted++
		}
	}
	if lines > 4 || counted != dials {
		t.Errorf("%d refusal lines standing for %d refusals; want at most 4 lines for all %d", lines, counted, dials)
	}
}
