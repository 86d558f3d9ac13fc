package mcpclient

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/devicectl/devicectl/internal/bearer"
)

// Wait bounds what a session waits for on loopback: it takes milliseconds, so running out means
// something is broken.
const Wait = 10 * time.Second

// Dial opens a session to endpoint (http://host:port/mcp), sending token as a bearer token when
// it is not empty, and closes it when the test ends. changed receives a value for every
// notifications/tools/list_changed; it holds 64, and the session stalls on more that nobody
// reads (drain it).
func Dial(t testing.TB, endpoint, token string) (cs *mcp.ClientSession, changed chan struct{}, err error) {
	t.Helper()
	changed = make(chan struct{}, 64)
	client := mcp.NewClient(&mcp.Implementation{Name: "devicectl-test", Version: "test"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	hc := &http.Client{Transport: http.DefaultTransport}
	if token != "" {
		hc.Transport = bearer.For(endpoint, token, nil)
	}
	ctx, cancel := context.WithTimeout(t.Context(), Wait)
	defer cancel()
	cs, err = client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		return nil, nil, err
	}
	t.Cleanup(func() { cs.Close() })
	return cs, changed, nil
}

// Connect is Dial that fails t when the session cannot be opened.
func Connect(t testing.TB, endpoint, token string) (*mcp.ClientSession, chan struct{}) {
	t.Helper()
	cs, changed, err := Dial(t, endpoint, token)
	if err != nil {
		t.Fatal(err)
	}
	return cs, changed
}

// ToolNames lists the session's tools' names (all pages), sorted.
func ToolNames(t testing.TB, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// WaitListed waits until tools/list holds every name in want, and returns the names listed then.
// The session must be open before the tools can appear, so that a list_changed (on changed, from
// Dial) follows any listing that lacks them.
func WaitListed(t testing.TB, cs *mcp.ClientSession, changed <-chan struct{}, want ...string) []string {
	t.Helper()
	timer := time.NewTimer(Wait)
	defer timer.Stop()
	for {
		names := ToolNames(t, cs)
		if !slices.ContainsFunc(want, func(n string) bool { return !slices.Contains(names, n) }) {
			return names
		}
		select {
		case <-changed:
		case <-timer.C:
			t.Fatalf("tools/list lacks some of %v within %s: %v", want, Wait, names)
		}
	}
}
