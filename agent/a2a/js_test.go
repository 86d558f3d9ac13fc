package a2a

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestJSClients runs the npm @a2a-js/sdk clients (1.3.0 for A2A 1.0, 0.3.14 for 0.3) from
// testdata/js/check.mjs against the handler. Opt in with DEVICECTL_A2A_JS=1 after
// scripts/a2a-js.sh has installed them; with the variable set, a missing node or missing
// modules fail the test rather than skip it.
func TestJSClients(t *testing.T) {
	if os.Getenv("DEVICECTL_A2A_JS") != "1" {
		t.Skip("set DEVICECTL_A2A_JS=1 (after scripts/a2a-js.sh) to run the @a2a-js/sdk clients")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("DEVICECTL_A2A_JS=1 but node is not on PATH: %v", err)
	}
	dir, err := filepath.Abs(filepath.Join("testdata", "js"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"a2a-sdk-v1", "a2a-sdk-v03"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", m, "package.json")); err != nil {
			t.Fatalf("DEVICECTL_A2A_JS=1 but %s is not installed (run scripts/a2a-js.sh): %v", m, err)
		}
	}

	const token = "js-secret"
	run := &fakeRunner{chunks: replyChunks, blockOn: "think hard"}
	ts := newTestServer(t, run, "", func(o *Options) { o.Token = token })

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "check.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"A2A_URL="+ts.URL,
		"A2A_TOKEN="+token,
		"A2A_MAC=aa:bb:cc:dd:ee:ff",
		"A2A_SLOW_TEXT=think hard",
		"A2A_WANT_REPLY=好的，音量已调到30。",
	)
	out, err := cmd.CombinedOutput()
	t.Logf("node check.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("the @a2a-js/sdk clients failed: %v", err)
	}
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
