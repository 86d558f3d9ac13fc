package mcpclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/devicectl/devicectl/internal/bearer"
)

// A server behind a bearer token: a session without it is refused, one with it lists the
// server's tools sorted, and WaitListed returns once a tool added after the session opened is
// listed.
func TestSession(t *testing.T) {
	const token = "t0ken"
	server := mcp.NewServer(&mcp.Implementation{Name: "lamp", Version: "1.0.0"}, nil)
	noop := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	object := map[string]any{"type": "object"}
	server.AddTool(&mcp.Tool{Name: "on", InputSchema: object}, noop)
	server.AddTool(&mcp.Tool{Name: "dim", InputSchema: object}, noop)
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !bearer.Matches(r, token) {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close) // after the sessions' cleanups: their streams hold connections

	if _, _, err := Dial(t, hs.URL, ""); err == nil {
		t.Error("Dial without the token opened a session")
	}
	cs, changed := Connect(t, hs.URL, token)
	if got := ToolNames(t, cs); !slices.Equal(got, []string{"dim", "on"}) {
		t.Errorf("ToolNames = %v, want [dim on]", got)
	}
	server.AddTool(&mcp.Tool{Name: "off", InputSchema: object}, noop)
	if got := WaitListed(t, cs, changed, "off", "on"); !slices.Equal(got, []string{"dim", "off", "on"}) {
		t.Errorf("WaitListed = %v, want [dim off on]", got)
	}
}
