package hub_test

import (
	"fmt"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/agent/hub"
	"github.com/devicectl/devicectl/agent/hub/hubtest"
	"github.com/devicectl/devicectl/internal/testing/leakcheck"
)

// TestIdleLineGoroutines: a registered line nobody talks to costs the hub one goroutine, its
// read loop: net/http's goroutine for the connection has returned, no worker waits for what
// people say, and the transport's keepalive and write watch are timers. A server holds
// thousands of such lines; a goroutine each is a stack each.
func TestIdleLineGoroutines(t *testing.T) {
	leakcheck.Check(t)
	h, url := start(t, &hub.Options{Listener: &listener{}})
	const n = 4
	for i := range n {
		hubtest.Connect(t, url, nil).MustRegister(t, fmt.Sprintf("02-00-00-00-10-%02X", i))
	}
	var b strings.Builder
	if err := pprof.Lookup("goroutine").WriteTo(&b, 2); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"hub.(*line).serve": n, "hub.(*line).userLoop": 0, "net/http.(*conn).serve": 0,
		"transport.(*Stream).ping": 0, "transport.(*Stream).checkWrites": 0}
	count := map[string]int{}
	for _, g := range strings.Split(b.String(), "\n\n") {
		for f := range want {
			if strings.Contains(g, f+"(") {
				count[f]++
			}
		}
	}
	for f, n := range want {
		if count[f] != n {
			t.Errorf("%d goroutines in %s with the lines idle, want %d", count[f], f, n)
		}
	}
	if len(h.Devices()) != n {
		t.Fatalf("%d devices registered, want %d", len(h.Devices()), n)
	}
}
