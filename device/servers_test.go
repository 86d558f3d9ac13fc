package device_test

import (
	"context"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/device/agenttest"
	"github.com/devicectl/devicectl/hal/sim"
	"github.com/devicectl/devicectl/internal/testing/standin"
)

// deadURL is a ws:// URL on a loopback port nobody listens on: a server that is down.
func deadURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "ws://" + ln.Addr().String() + "/"
	ln.Close()
	return url
}

// With several servers, the device dials them in order and moves on to the next when one is
// down or refuses it, backing off between tries as with one; once a line it served is lost, it
// tries the next server, wrapping around, not the same one again.
func TestServersTriedInOrder(t *testing.T) {
	checkLeaks(t)
	down := deadURL(t)
	var refusals atomic.Int32
	refusing := standin.Start(t, &agenttest.Options{Register: func(context.Context, *agenttest.Device) *jsonrpc2.Error {
		refusals.Add(1)
		return &jsonrpc2.Error{Code: -32602, Message: "Invalid params"}
	}})
	first := standin.Start(t, nil)
	second := standin.Start(t, nil)
	var sl sleeps
	a := newAgent(t, device.Options{URLs: []string{down, refusing.URL(), first.URL(), second.URL()}, Sleep: sl.sleep,
		Backoff: device.Backoff{Min: 100 * time.Millisecond, Max: time.Second}})
	runAgent(t, a)

	d := waitDevice(t, first)
	if n := len(sl.all()); n != 2 {
		t.Errorf("%d back-off waits before the third server; want 2 (the one down, the one refusing)", n)
	}
	if n := refusals.Load(); n != 1 {
		t.Errorf("the refusing server was tried %d times; want once", n)
	}
	for i, w := range sl.all() {
		if w < 100*time.Millisecond || w > time.Second {
			t.Errorf("wait %d = %s, outside the back-off's [100ms, 1s]", i, w)
		}
	}
	if resp := standin.Execute(t, d, "amplify_volume", `{"level":30}`); resp.Error != nil {
		t.Fatal(resp.Error)
	}
	d.Close()
	waitDevice(t, second)
	if n := len(sl.all()); n != 3 {
		t.Errorf("%d back-off waits in all; want 3: the lost line moves on to the next server at once", n)
	}
	if _, ok := first.Device(testMAC); ok {
		t.Error("the device went back to the server that lost its line")
	}
}

// The list is checked as one URL is: both forms at once, and a bad URL, named by its place.
func TestServersChecked(t *testing.T) {
	checkLeaks(t)
	for _, tc := range []struct {
		name string
		opts device.Options
		want string
	}{
		{"both", device.Options{URL: "ws://a/", URLs: []string{"ws://b/"}}, "both URL and URLs"},
		{"bad second", device.Options{URLs: []string{"ws://a/", "http://b/"}}, `server URL "http://b/": want ws:// or wss://`},
		{"none", device.Options{URLs: []string{}}, "no server URL"},
	} {
		tc.opts.MAC = testMAC
		tc.opts.Registry = seedRegistry(t, sim.NewSpeaker(nil), sim.NewFace(nil))
		if _, err := device.New(&tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: New = %v; want an error with %q", tc.name, err, tc.want)
		}
	}
}
