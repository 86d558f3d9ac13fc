package swarm

import (
	"bufio"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/devicectl/devicectl/protocol"
)

const (
	// DefaultMACPrefix starts every swarm MAC: 02 is a locally administered, unicast first byte,
	// so the addresses cannot be those of real hardware; DC is for devicectl.
	DefaultMACPrefix = "02-DC"
	// RampPerDevice is the default ramp per device: 1,000 first dials a second, a pace a
	// server's accept queue (often 4096 deep) absorbs.
	RampPerDevice = time.Millisecond
	// fdReserve is the open files the process needs besides one socket per device: stdio, the
	// poller, resolvers, and dials of devices reconnecting while their old socket closes.
	fdReserve = 64
)

// Plan is a checked swarm: NewPlan makes one.
type Plan struct {
	N        int           // devices
	Prefix   []byte        // 1 to 5 bytes; the device number fills the rest of the MAC
	Ramp     time.Duration // the first dials are spread evenly over it
	Interval time.Duration // between status lines
}

// LimitFunc reports the process's open-file limit; ok is false when it is unknown.
type LimitFunc func() (soft, hard uint64, ok bool)

// NewPlan checks a swarm's settings; each error names the flag at fault (-n, --mac-prefix,
// --ramp, --interval) and is the user's to fix. limit is the open-file limit (OpenFileLimit);
// nil, or ok false, skips that check.
func NewPlan(n int, prefix string, ramp, interval time.Duration, limit LimitFunc) (Plan, error) {
	p := Plan{N: n, Ramp: ramp, Interval: interval}
	if n < 1 {
		return p, fmt.Errorf("-n %d: want at least 1 device", n)
	}
	b, err := ParseMACPrefix(prefix)
	if err != nil {
		return p, fmt.Errorf("--mac-prefix: %w", err)
	}
	p.Prefix = b
	if free := 6 - len(b); uint64(n) > 1<<(8*free) { // free is 1 to 5 bytes: no overflow
		return p, fmt.Errorf("-n %d: --mac-prefix %s leaves room for %d devices; use a shorter prefix", n, prefix, uint64(1)<<(8*free))
	}
	if ramp < 0 {
		return p, fmt.Errorf("--ramp %s: want 0s or more", ramp)
	}
	if interval <= 0 {
		return p, fmt.Errorf("--interval %s: want a positive duration", interval)
	}
	if limit != nil {
		if soft, hard, ok := limit(); ok {
			if err := CheckOpenFiles(n, soft, hard); err != nil {
				return p, err
			}
		}
	}
	return p, nil
}

// CheckOpenFiles says whether n devices fit in the open-file limit. Go raises its soft limit to
// the hard one at start-up, so only the hard limit can be short, and only an administrator can
// raise it: the message says how.
func CheckOpenFiles(n int, soft, hard uint64) error {
	need := uint64(n) + uint64(n)/10 + fdReserve // a tenth more for reconnects in flight
	if need <= soft {
		return nil
	}
	return fmt.Errorf("-n %d needs about %d open files (a socket per device), but the limit is %d (hard limit %d): "+
		"raise it with `ulimit -n %d` (above the hard limit, as root), LimitNOFILE=%d in a systemd unit, or a nofile line in /etc/security/limits.conf",
		n, need, soft, hard, need, need)
}

// OpenFileLimit reads RLIMIT_NOFILE from /proc/self/limits: through /proc rather than
// getrlimit(2) so this file builds on every platform; elsewhere ok is false.
func OpenFileLimit() (soft, hard uint64, ok bool) {
	f, err := os.Open("/proc/self/limits")
	if err != nil {
		return 0, 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, found := strings.CutPrefix(sc.Text(), "Max open files")
		if !found {
			continue
		}
		fields := strings.Fields(rest) // soft, hard, "files"; "unlimited" parses as no limit
		if len(fields) < 2 {
			return 0, 0, false
		}
		return parseLimit(fields[0]), parseLimit(fields[1]), true
	}
	return 0, 0, false
}

func parseLimit(s string) uint64 {
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return math.MaxUint64 // "unlimited"
	}
	return v
}

// LocalPorts is the number of ephemeral ports Linux picks from, which bounds the connections to
// one server address and port; ok is false when unknown.
func LocalPorts() (int, bool) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, false
	}
	lo, err1 := strconv.Atoi(f[0])
	hi, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || hi < lo {
		return 0, false
	}
	return hi - lo + 1, true
}

// ParseMACPrefix reads 1 to 5 hex pairs written as a MAC is (protocol.ParseMACPrefix) and
// insists on a locally administered unicast first byte, so swarm MACs never pose as a vendor's
// hardware.
func ParseMACPrefix(s string) ([]byte, error) {
	b, err := protocol.ParseMACPrefix(s)
	if err != nil {
		return nil, err
	}
	if b[0]&0x02 == 0 || b[0]&0x01 != 0 {
		return nil, fmt.Errorf("%q: the first byte must be locally administered and unicast (second-lowest bit set, lowest clear: 02, 06, 0A, ..., FE)", s)
	}
	return b, nil
}

// MAC is device i's MAC: the prefix, then i big-endian in the remaining bytes.
func MAC(prefix []byte, i int) string {
	var b [6]byte
	copy(b[:], prefix)
	v := uint64(i)
	for j := 5; j >= len(prefix); j-- {
		b[j] = byte(v)
		v >>= 8
	}
	return protocol.FormatMAC(b[:])
}

// ClientID is a stable Client-Id for mac (a name-based UUID, version 5 layout): a real device
// keeps one across restarts, and a server may key its sessions on it.
func ClientID(mac string) string {
	h := sha1.Sum([]byte("devicectl swarm " + mac))
	h[6] = h[6]&0x0f | 0x50
	h[8] = h[8]&0x3f | 0x80
	x := hex.EncodeToString(h[:16])
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}
