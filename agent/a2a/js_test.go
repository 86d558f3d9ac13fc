package a2a

import (
	"testing"

	"github.com/devicectl/devicectl/internal/testing/a2ajs"
)

// TestJSClients runs the npm @a2a-js/sdk clients (1.3.0 for A2A 1.0, 0.3.14 for 0.3) from
// testdata/js/check.mjs against the handler (internal/testing/a2ajs). Opt in with
// DEVICECTL_A2A_JS=1 after scripts/a2a-js.sh has installed them.
func TestJSClients(t *testing.T) {
	js := a2ajs.Need(t)
	const token = "js-secret"
	run := &fakeRunner{chunks: replyChunks, blockOn: "think hard"}
	ts := newTestServer(t, run, "", func(o *Options) { o.Token = token })
	js.Run(t, a2ajs.Checks{URL: ts.URL, Token: token, MAC: "aa:bb:cc:dd:ee:ff", SlowText: "think hard", WantReply: "好的，音量已调到30。"})
	// Each client spoke its own protocol version on its own path.
	for _, p := range []string{PathJSONRPC, PathJSONRPCv03} {
		if ts.served("POST", p) == 0 {
			t.Errorf("no request reached POST %s", p)
		}
	}
	for _, r := range run.requests() {
		if r.MAC != "aa:bb:cc:dd:ee:ff" {
			t.Errorf("a JS client's turn reached the runner with MAC %q", r.MAC)
		}
	}
}
