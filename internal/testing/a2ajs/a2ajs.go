package a2ajs

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/devicectl/devicectl/internal/testing/peer"
)

// modules are the clients check.mjs imports, as package.json names them.
var modules = []string{"a2a-sdk-v1", "a2a-sdk-v03"}

// Clients is node with the installed clients.
type Clients struct {
	node string
	dir  string // agent/a2a/testdata/js
}

// Checks is what check.mjs is told about the server.
type Checks struct {
	URL   string // the server's base URL, http://ADDR
	Token string // the bearer token it asks for; "" for none
	MAC   string // the device the messages are for (metadata mac); "" for none
	// SlowText is a text whose turn runs until a client cancels it; WantReply is the reply to
	// 把音量调到30 ("" takes any reply that is not empty).
	SlowText, WantReply string
}

// clientsDir is where scripts/a2a-js.sh installs the clients, beside check.mjs.
const clientsDir = "agent/a2a/testdata/js"

// js is the clients as an opt-in peer.
var js = peer.Peer{Env: "DEVICECTL_A2A_JS", What: "the @a2a-js/sdk clients", Script: "scripts/a2a-js.sh"}

// Need skips t unless DEVICECTL_A2A_JS is 1, and fails it when node or the clients are missing.
// Call it before starting the server, so that a skip costs nothing.
func Need(t testing.TB) *Clients {
	t.Helper()
	js.Need(t)
	node := js.Program(t, "node")
	for _, m := range modules {
		js.File(t, clientsDir+"/node_modules/"+m+"/package.json")
	}
	return &Clients{node: node, dir: js.File(t, clientsDir)}
}

// Run runs check.mjs against the server c describes and fails t if a client found a mismatch;
// its output is logged either way.
func (cl *Clients) Run(t testing.TB, c Checks) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cl.node, "check.mjs")
	cmd.Dir = cl.dir
	cmd.Env = append(os.Environ(),
		"A2A_URL="+c.URL,
		"A2A_TOKEN="+c.Token,
		"A2A_MAC="+c.MAC,
		"A2A_SLOW_TEXT="+c.SlowText,
		"A2A_WANT_REPLY="+c.WantReply,
	)
	out, err := cmd.CombinedOutput()
	t.Logf("node check.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("the @a2a-js/sdk clients failed: %v", err)
	}
}
