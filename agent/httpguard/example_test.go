package httpguard_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/devicectl/devicectl/agent/httpguard"
)

// A server on 127.0.0.1:8765 behind a Guard: a page under a rebound DNS name is refused, a
// client that is no browser is served.
func ExampleGuard_Handler() {
	g, err := httpguard.New(&httpguard.Options{HostsKey: "agent.allowed_hosts", OriginsKey: "agent.allowed_origins"})
	if err != nil {
		panic(err)
	}
	h := g.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "served") }))
	for _, host := range []string{"rebind.evil.example:8765", "127.0.0.1:8765"} {
		r := httptest.NewRequest("POST", "/tasks/send", strings.NewReader("{}"))
		r.Host = host
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Print(w.Code, " ", w.Body)
	}
	// Output:
	// 421 this server does not answer to Host "rebind.evil.example:8765" (DNS rebinding is refused): if clients reach it by that name, add rebind.evil.example to agent.allowed_hosts
	// 200 served
}
