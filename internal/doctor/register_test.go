package doctor

import (
	"strings"
	"testing"
	"time"

	"github.com/devicectl/devicectl/internal/testing/boundmac"
	"github.com/devicectl/devicectl/internal/testing/leakcheck"
)

// With Register, the doctor registers as the device and shows the server's answer: accepted, or
// refused with the reason the server gave in data.details (here: the MAC is bound to another
// device's Client-Id).
func TestCheckRegistration(t *testing.T) {
	leakcheck.Check(t)
	t.Setenv("HTTP_PROXY", "")
	const mac = "AA-BB-CC-DD-EE-04"
	url := boundmac.Serve(t, mac, "the-other-board") // another device registered the MAC and left

	s := &Server{URL: url, MAC: mac, ClientID: "this-board", UserAgent: "devicectl/test", HandshakeTimeout: 5 * time.Second, Register: true}
	res := CheckServer(t.Context(), s)
	if got := names(res); got != "tcp OK, websocket OK, register FAIL" {
		t.Fatalf("a MAC bound elsewhere: %s, %+v", got, res)
	}
	if msg := res[2].Err.Error(); !strings.HasPrefix(msg, "refused: -32602 Invalid params: MAC "+mac+" is bound to another client") || !strings.Contains(msg, "forget "+mac) {
		t.Errorf("the refusal does not give the server's reason: %q", msg)
	}

	// As the device the MAC is bound to, it is accepted; the doctor leaves at once.
	s.ClientID = "the-other-board"
	if got := names(CheckServer(t.Context(), s)); got != "tcp OK, websocket OK, register OK" {
		t.Errorf("the MAC's own device: %s", got)
	}
	// Without Register, nothing registers.
	s.Register = false
	if got := names(CheckServer(t.Context(), s)); got != "tcp OK, websocket OK" {
		t.Errorf("without Register: %s", got)
	}
}
