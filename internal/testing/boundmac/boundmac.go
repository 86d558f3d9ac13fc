// Package boundmac starts an agent hub on which a MAC is already bound to another device, for
// the tests of what a device is told when the server refuses its registration (devicectl doctor).
package boundmac

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/agent/hub"
	"github.com/devicectl/devicectl/agent/hub/hubtest"
)

// Serve serves a hub over WebSocket until the test ends, on which a device with Client-Id
// clientID has registered mac and left, so mac stays bound to clientID. It returns the devices'
// ws:// URL.
func Serve(t testing.TB, mac, clientID string) string {
	t.Helper()
	h := hub.New(nil)
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	url := "ws" + strings.TrimPrefix(srv.URL, "http") + "/"
	other, err := hubtest.Dial(t.Context(), url, &hubtest.Options{ClientID: clientID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Register(t.Context(), mac, hubtest.Tools); err != nil {
		t.Fatal(err)
	}
	done, _ := h.Done(mac)
	other.Close()
	<-done
	return url
}
