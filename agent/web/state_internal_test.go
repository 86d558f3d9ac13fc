//go:build !devicectl_omit_serve || !devicectl_omit_sim

package web

import (
	"fmt"
	"testing"

	"github.com/devicectl/devicectl/agent/hub"
)

// Devices that came and went under ever new MACs do not pile up: the page keeps the connected
// ones and the maxGone that left last, and the calls of those only.
func TestGoneDevicesBounded(t *testing.T) {
	s := newState(false, DefaultCallBytes, DefaultCalls, false, 0)
	const n = maxGone + 40
	mac := func(i int) string { return fmt.Sprintf("02-00-00-00-%02X-%02X", i/256, i%256) }
	s.registered(hub.Device{MAC: "AA-AA-AA-AA-AA-AA"}) // stays connected throughout
	for i := range n {
		s.registered(hub.Device{MAC: mac(i)})
		s.addCall(callView{MAC: mac(i), Tool: "get_device_status"})
		s.disconnected(mac(i), "gone")
	}
	if got := len(s.devices); got != maxGone+1 {
		t.Fatalf("%d devices kept, want %d gone and the connected one", got, maxGone)
	}
	if _, ok := s.devices["AA-AA-AA-AA-AA-AA"]; !ok {
		t.Error("the connected device was forgotten")
	}
	for i := n - maxGone; i < n; i++ {
		if _, ok := s.devices[mac(i)]; !ok {
			t.Errorf("%s, among the last gone, was forgotten", mac(i))
		}
	}
	// The calls of a forgotten device go with it.
	if got := len(s.calls); got != maxGone {
		t.Errorf("calls are kept for %d devices, want the %d gone devices still shown", got, maxGone)
	}
	s.addCall(callView{MAC: mac(0), Tool: "get_device_status"}) // a late answer of a forgotten one
	if _, ok := s.calls[mac(0)]; ok {
		t.Errorf("a call of the forgotten %s is kept", mac(0))
	}
}
