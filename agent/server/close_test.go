//go:build !devicectl_omit_serve || !devicectl_omit_sim

package server

import (
	"net/http"
	"testing"
	"time"

	"github.com/devicectl/devicectl/internal/testing/loopback"
	"github.com/devicectl/devicectl/internal/testing/rawconn"
)

// A connection opened ahead of need that never sends a request (a browser's preconnect) does
// not hold Close up; net/http alone waits 5 s for its first request.
func TestCloseSkipsSilentConnections(t *testing.T) {
	srv, err := New(&Options{Config: testConfig(t), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	addr, stop := loopback.Serve(t, srv)
	silent := rawconn.Dial(t, addr)
	// Connections are accepted in the order they came: once a later one is answered, the
	// server holds the silent one too.
	resp, err := http.Get("http://" + addr + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	start := time.Now()
	stop()
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %s with a connection that sent nothing", d)
	}
	if err := rawconn.Closed(silent); err != nil {
		t.Error(err)
	}
}
