//go:build !linux

package netfault

import (
	"os"
	"runtime"
	"testing"
)

// TestNetworkFaults needs network namespaces and veth pairs, which only Linux has; the test
// proper (netfault_test.go) does not build elsewhere.
func TestNetworkFaults(t *testing.T) {
	msg := "network namespaces and veth pairs are Linux only (GOOS=" + runtime.GOOS + ")"
	if os.Getenv("DEVICECTL_NETFAULT") == "1" {
		t.Fatal(msg + " (DEVICECTL_NETFAULT=1: this test must run here)")
	}
	t.Skip(msg + "; it runs on Linux as root with DEVICECTL_NETFAULT=1 (scripts/netfault.sh)")
}
