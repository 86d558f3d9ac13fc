//go:build linux

package netfault

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// requireEnv set to 1 runs the test, and turns every reason to skip (but a missing netem) into a
// failure; unset, or anything else, skips it: a plain `go test ./...`, even as root, must not
// create network namespaces or touch the machine's network.
const requireEnv = "DEVICECTL_NETFAULT"

// nsPrefix starts the name of every namespace this test creates; the test binary's pid follows,
// so a later run can tell the namespaces of a dead run from those of a running one.
const nsPrefix = "devicectl-netfault-"

// skipOrFail skips the test, or fails it when DEVICECTL_NETFAULT=1 asks for the test to run.
func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv(requireEnv) == "1" {
		t.Fatalf("%s (%s=1: this test must run here)", msg, requireEnv)
	}
	t.Skip(msg)
}

// checkPrerequisites skips (or fails) at once, before anything is built, where the test cannot
// run: it must cost nothing on a developer's machine.
func checkPrerequisites(t *testing.T) {
	t.Helper()
	if os.Getenv(requireEnv) != "1" {
		t.Skipf("opt-in: it creates a network namespace and breaks its link for about 20s; "+
			"run it with %s=1 as root (go test), or scripts/netfault.sh (make netfault), which sets it and uses sudo", requireEnv)
	}
	if testing.Short() {
		t.Skip("-short: builds devicectl and breaks a real network for about 20s")
	}
	if euid := os.Geteuid(); euid != 0 {
		skipOrFail(t, "needs root to create a network namespace and a veth pair (euid %d); run scripts/netfault.sh, or go test as root", euid)
	}
	if _, err := exec.LookPath("ip"); err != nil {
		skipOrFail(t, "ip (iproute2) is not on PATH: apt-get install iproute2")
	}
}

// netns is a network namespace joined to the host by a veth pair: the server lives on the
// namespace's side, the device on the host's, so taking the namespace's side down is a line
// that breaks somewhere between them, as a router losing power would.
type netns struct {
	name     string
	hostVeth string // the host's end, holding hostIP
	nsVeth   string // the namespace's end, holding nsIP
	hostIP   string
	nsIP     string
}

// ipRun runs ip (or, with a leading "tc", tc) and returns its combined output; the error names
// the command and quotes what it printed.
func ipRun(ctx context.Context, args ...string) (string, error) {
	prog := "ip"
	if len(args) > 0 && args[0] == "tc" {
		prog, args = "tc", args[1:]
	}
	out, err := exec.CommandContext(ctx, prog, args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w: %s", prog, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return string(out), nil
}

// setupNetns creates the namespace and the veth pair, with addresses and links up, and removes
// them when the test ends. Where namespaces or veth pairs are not permitted (a container without
// the capabilities) it skips.
func setupNetns(t *testing.T) *netns {
	t.Helper()
	ctx := t.Context()
	removeStaleNetns(t)

	var tag [3]byte
	rand.Read(tag[:])
	n := &netns{
		name:     nsPrefix + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(tag[:]),
		hostVeth: "nfh" + hex.EncodeToString(tag[:]), // interface names are at most 15 bytes
		nsVeth:   "nfn" + hex.EncodeToString(tag[:]),
	}
	if _, err := ipRun(ctx, "netns", "add", n.name); err != nil {
		skipOrFail(t, "network namespaces are not permitted here: %v", err)
	}
	t.Cleanup(func() { n.remove(t) })
	if _, err := ipRun(ctx, "link", "add", n.hostVeth, "type", "veth", "peer", "name", n.nsVeth, "netns", n.name); err != nil {
		skipOrFail(t, "veth pairs are not available here: %v", err)
	}
	n.hostIP, n.nsIP = freeSubnet(t)
	steps := [][]string{
		{"addr", "add", n.hostIP + "/30", "dev", n.hostVeth},
		{"link", "set", n.hostVeth, "up"},
		{"-n", n.name, "addr", "add", n.nsIP + "/30", "dev", n.nsVeth},
		{"-n", n.name, "link", "set", n.nsVeth, "up"},
		{"-n", n.name, "link", "set", "lo", "up"},
	}
	for _, s := range steps {
		if _, err := ipRun(ctx, s...); err != nil {
			t.Fatalf("setting up the veth pair: %v", err)
		}
	}
	return n
}

// freeSubnet picks a /30 in 10.200.0.0/16 that no interface of the host has an address in, so
// two runs on one machine (or a network that uses 10.200) are not mixed up.
func freeSubnet(t *testing.T) (hostIP, nsIP string) {
	t.Helper()
	for range 20 {
		r, err := rand.Int(rand.Reader, big.NewInt(1<<14))
		if err != nil {
			t.Fatal(err)
		}
		base := int(r.Int64()) * 4
		prefix := fmt.Sprintf("10.200.%d.%d", base>>8, base&0xff)
		out, err := ipRun(t.Context(), "-o", "-4", "addr", "show", "to", prefix+"/30")
		if err != nil {
			t.Fatalf("looking for a free subnet: %v", err)
		}
		if strings.TrimSpace(out) == "" {
			return fmt.Sprintf("10.200.%d.%d", base>>8, base&0xff+1), fmt.Sprintf("10.200.%d.%d", base>>8, base&0xff+2)
		}
	}
	t.Fatal("no free /30 in 10.200.0.0/16 after 20 tries")
	return "", ""
}

// remove deletes the namespace and the host's end of the veth pair. The processes started in
// the namespace are stopped before (their cleanups run first); deleting the namespace takes the
// pair with it, and the explicit delete covers a namespace that is kept alive by a straggler.
func (n *netns) remove(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := ipRun(ctx, "netns", "del", n.name); err != nil {
		t.Errorf("cleaning up: %v", err)
	}
	// Usually gone with the namespace already (the kernel may still be removing it, whence
	// either message).
	out, err := ipRun(ctx, "link", "del", n.hostVeth)
	if err != nil && !strings.Contains(out, "Cannot find device") && !strings.Contains(out, "No such device") {
		t.Errorf("cleaning up: %v", err)
	}
}

// removeStaleNetns deletes the namespaces of earlier runs whose test binary is gone: one killed
// by go test's -timeout runs no cleanups. Namespaces of runs still going are left alone.
func removeStaleNetns(t *testing.T) {
	t.Helper()
	out, err := ipRun(t.Context(), "netns", "list")
	if err != nil {
		return // setupNetns's ip netns add says what is wrong
	}
	for _, line := range strings.Split(out, "\n") {
		name, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		rest, ok := strings.CutPrefix(name, nsPrefix)
		if !ok {
			continue
		}
		pidStr, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidStr)
		if err != nil || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			continue // its test is still running (or the pid is taken: leave it)
		}
		if _, err := ipRun(t.Context(), "netns", "del", name); err != nil {
			t.Logf("removing a namespace left by an earlier run: %v", err)
		} else {
			t.Logf("removed namespace %s, left by an earlier run that was killed", name)
		}
	}
}

// exec returns the arguments that run prog with args inside the namespace.
func (n *netns) exec(prog string, args ...string) []string {
	return append([]string{"netns", "exec", n.name, prog}, args...)
}
