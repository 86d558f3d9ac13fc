//go:build !devicectl_omit_swarm

package main

import (
	"bufio"
	"context"
	"crypto/sha1"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/bits"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/internal/logging"
)

// `devicectl swarm` runs many simulated devices in one process, for people load-testing an agent
// server. Each device is what `run --hardware sim` is (its own MAC, speaker, face, tool registry
// and device.Agent built by agentOptions), so the server sees real sessions; what the devices
// share is the process's logger, configuration and counters.

const (
	// defaultMACPrefix starts every swarm MAC: 02 is a locally administered, unicast first byte,
	// so the addresses cannot be those of real hardware; DC is for devicectl.
	defaultMACPrefix = "02-DC"
	// rampPerDevice is the default --ramp per device: 1,000 first dials a second, a pace a
	// server's accept queue (often 4096 deep) absorbs.
	rampPerDevice = time.Millisecond
	// fdReserve is the open files the process needs besides one socket per device: stdio, the
	// poller, resolvers, and dials of devices reconnecting while their old socket closes.
	fdReserve = 64
)

const swarmLong = `swarm runs N simulated devices in one process against an agent server, for load tests. Each
device has its own MAC and simulated speaker and face, and runs the same session as devicectl
run: it registers its tools, answers the server's calls and reconnects with back-off.

MACs are --mac-prefix followed by the device's number, so they are locally administered and the
same on every run: with the default prefix, -n 3 gives 02-DC-00-00-00-00 to 02-DC-00-00-00-02.
Give two swarms against one server different prefixes.

The first dials are spread evenly over --ramp (default 1ms a device, so -n 10000 takes 10s).
Every --interval a status line (redrawn in place on a terminal) gives the devices connected and
registered, the calls answered so far and, for the calls of that interval, the p50, p99 and max
time the devices took to handle them. AI messages are counted, not shown.

SIGINT or SIGTERM stops every device as run stops (running calls finish, close 1000), prints a
summary and exits 0. The bearer token, if the server wants one, comes from DEVICECTL_TOKEN.
Each device holds an open file: a -n past the open-file limit (ulimit -n) is refused.`

// swarmPlan is a checked swarm command line.
type swarmPlan struct {
	n        int
	prefix   []byte // 1 to 5 bytes; the device number fills the rest of the MAC
	ramp     time.Duration
	interval time.Duration
}

func swarmDefaults() *Config {
	c := Defaults()
	// One warning per device (a server going away) would be thousands of lines: the status line
	// counts them instead, and shows the latest (see problemHandler).
	c.Log.Level = "error"
	return c
}

func newSwarmCmd() *cobra.Command {
	var (
		n              int
		prefix         string
		ramp, interval time.Duration
	)
	cmd := &cobra.Command{
		Use:   "swarm",
		Short: "Run many simulated devices against an agent server, for load tests",
		Long:  swarmLong,
		Example: `  devicectl swarm -n 1000 --server ws://agent.local:8080/device
  devicectl swarm -n 10000 --server ws://agent.local:8080/device --ramp 30s --mac-prefix 02-DC-01`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c := swarmDefaults()
			if err := applyFlags(cmd.Flags(), c); err != nil {
				return err
			}
			if !cmd.Flags().Changed("ramp") {
				ramp = time.Duration(n) * rampPerDevice
			}
			plan, err := checkSwarm(c, n, prefix, ramp, interval, openFileLimit)
			if err != nil {
				return err
			}
			stderr := cmd.ErrOrStderr()
			if ports, ok := localPorts(); ok && n > ports {
				fmt.Fprintf(stderr, "devicectl swarm: warning: %d devices but %d local ports (net.ipv4.ip_local_port_range): dials to one server address past that fail; widen the range\n", n, ports)
			}
			s, err := newSwarm(c, plan, cmd.OutOrStdout(), stderr, os.Getenv)
			if err != nil {
				return err
			}
			return s.run(cmd.Context())
		},
	}
	fs := cmd.Flags()
	fs.IntVarP(&n, "count", "n", 0, "how many devices to run (required)")
	fs.StringVar(&prefix, "mac-prefix", defaultMACPrefix, "first 1 to 5 bytes of every MAC, locally administered (first byte 02, 06, 0A, ...); the device number fills the rest")
	fs.DurationVar(&ramp, "ramp", 0, "spread the first dials evenly over this time (default 1ms a device; 0s dials all at once)")
	fs.DurationVar(&interval, "interval", time.Second, "time between status lines")
	bindFlags(fs, swarmDefaults(), "server", "language", "ping-interval", "log-level", "log-format")
	return cmd
}

// checkSwarm checks the flags that no setting checks; every error is the user's to fix (exit 2).
// limit reports the open-file limit; ok false when it is unknown (not Linux), which skips the check.
func checkSwarm(c *Config, n int, prefix string, ramp, interval time.Duration, limit func() (soft, hard uint64, ok bool)) (swarmPlan, error) {
	p := swarmPlan{n: n, ramp: ramp, interval: interval}
	if c.Server.URL == "" {
		return p, usageError{errors.New("--server is required: the agent server's ws:// or wss:// URL")}
	}
	if n < 1 {
		return p, usageError{fmt.Errorf("-n %d: want at least 1 device", n)}
	}
	b, err := parseMACPrefix(prefix)
	if err != nil {
		return p, usageError{fmt.Errorf("--mac-prefix: %w", err)}
	}
	p.prefix = b
	if free := 6 - len(b); uint64(n) > 1<<(8*free) { // free is 1 to 5 bytes: no overflow
		return p, usageError{fmt.Errorf("-n %d: --mac-prefix %s leaves room for %d devices; use a shorter prefix", n, prefix, uint64(1)<<(8*free))}
	}
	if ramp < 0 {
		return p, usageError{fmt.Errorf("--ramp %s: want 0s or more", ramp)}
	}
	if interval <= 0 {
		return p, usageError{fmt.Errorf("--interval %s: want a positive duration", interval)}
	}
	if soft, hard, ok := limit(); ok {
		if err := checkOpenFiles(n, soft, hard); err != nil {
			return p, usageError{err}
		}
	}
	return p, nil
}

// checkOpenFiles says whether n devices fit in the open-file limit. Go raises its soft limit to
// the hard one at start-up, so only the hard limit can be short, and only an administrator can
// raise it: the message says how.
func checkOpenFiles(n int, soft, hard uint64) error {
	need := uint64(n) + uint64(n)/10 + fdReserve // a tenth more for reconnects in flight
	if need <= soft {
		return nil
	}
	return fmt.Errorf("-n %d needs about %d open files (a socket per device), but the limit is %d (hard limit %d): "+
		"raise it with `ulimit -n %d` (above the hard limit, as root), LimitNOFILE=%d in a systemd unit, or a nofile line in /etc/security/limits.conf",
		n, need, soft, hard, need, need)
}

// openFileLimit reads RLIMIT_NOFILE from /proc/self/limits: through /proc rather than
// getrlimit(2) so this file builds on every platform; elsewhere the check is skipped.
func openFileLimit() (soft, hard uint64, ok bool) {
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

// localPorts is the number of ephemeral ports Linux picks from, which bounds the connections to
// one server address and port; ok false when unknown.
func localPorts() (int, bool) {
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

// parseMACPrefix reads 1 to 5 hex pairs separated by - or : and insists on a locally
// administered unicast first byte, so swarm MACs never pose as a vendor's hardware.
func parseMACPrefix(s string) ([]byte, error) {
	digits := strings.NewReplacer("-", "", ":", "").Replace(strings.TrimSpace(s))
	b, err := hex.DecodeString(digits)
	if err != nil || len(b) < 1 || len(b) > 5 {
		return nil, fmt.Errorf("%q: want 1 to 5 hex pairs, e.g. %s", s, defaultMACPrefix)
	}
	if b[0]&0x02 == 0 || b[0]&0x01 != 0 {
		return nil, fmt.Errorf("%q: the first byte must be locally administered and unicast (second-lowest bit set, lowest clear: 02, 06, 0A, ..., FE)", s)
	}
	return b, nil
}

// swarmMAC is device i's MAC: the prefix, then i big-endian in the remaining bytes.
func swarmMAC(prefix []byte, i int) string {
	var b [6]byte
	copy(b[:], prefix)
	v := uint64(i)
	for j := 5; j >= len(prefix); j-- {
		b[j] = byte(v)
		v >>= 8
	}
	mac, _ := device.NormalizeMAC(net.HardwareAddr(b[:]).String()) // six bytes always normalise
	return mac
}

// swarmClientID is a stable Client-Id for mac (a name-based UUID, version 5 layout): a real
// device keeps one across restarts, and a server may key its sessions on it.
func swarmClientID(mac string) string {
	h := sha1.Sum([]byte("devicectl swarm " + mac))
	h[6] = h[6]&0x0f | 0x50
	h[8] = h[8]&0x3f | 0x80
	x := hex.EncodeToString(h[:16])
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

// swarm is one run of `devicectl swarm`.
type swarm struct {
	cfg      *Config
	plan     swarmPlan
	out      io.Writer // status lines and the summary
	errw     io.Writer // stderr through the token's redactor
	terminal bool
	log      *slog.Logger
	token    string
	tls      *tls.Config
	problem  atomic.Pointer[string] // the latest warning any device logged

	// devs is allocated once: the status loop reads it while the launcher fills in the agents.
	devs []swarmDevice
	// The callbacks every device shares, made once rather than a method value per device.
	render     func(device.AIMessage)
	onCall     func(device.CallReport)
	onLineLost func(error)

	start         time.Time
	registeredAny atomic.Int64 // devices that have registered at least once
	allRegistered atomic.Int64 // nanoseconds from start until the last of them did; 0 until then
	registrations atomic.Int64 // sessions registered, reconnections included
	lost          atomic.Int64 // lines lost other than by a stop
	callErrors    atomic.Int64 // calls answered with a JSON-RPC error
	messages      atomic.Int64 // mcp/ai/message notifications received
	calls         latencyHist

	agents sync.WaitGroup // each device's Run
	err    atomic.Pointer[error]
}

// swarmDevice is what the swarm keeps per device: kept small, as there may be tens of thousands.
type swarmDevice struct {
	s          *swarm
	agent      atomic.Pointer[device.Agent] // nil until launched
	registered atomic.Bool                  // has registered at least once
}

func newSwarm(c *Config, p swarmPlan, stdout, stderr io.Writer, getenv func(string) string) (*swarm, error) {
	redact := logging.NewRedactor(stderr)
	s := &swarm{cfg: c, plan: p, out: stdout, errw: redact, terminal: isTerminal(stdout)}
	s.log = slog.New(&problemHandler{next: logHandler(c.Log, redact, stderr), last: &s.problem})
	var err error
	if s.token, err = loadToken(c.Server, getenv, s.log); err != nil {
		return nil, err
	}
	redact.Add(s.token)
	if s.tls, err = tlsConfig(c.Server, s.log); err != nil {
		return nil, err
	}
	s.devs = make([]swarmDevice, p.n)
	s.render = func(device.AIMessage) { s.messages.Add(1) }
	s.onCall = func(r device.CallReport) {
		s.calls.add(r.Duration)
		if r.Code != 0 {
			s.callErrors.Add(1)
		}
	}
	s.onLineLost = func(err error) {
		if err != nil {
			s.lost.Add(1)
		}
	}
	return s, nil
}

// build makes device i's hardware, tools and agent. The registry cannot be shared: the built-in
// tools hold their device's speaker and face, and get_device_status its connection state.
func (s *swarm) build(i int) (*device.Agent, *hardware, error) {
	d := &s.devs[i]
	d.s = s
	hw := simHardware(nil)
	reg, err := newRegistry(hw, s.cfg, d.connState)
	if err != nil {
		return nil, nil, err
	}
	mac := swarmMAC(s.plan.prefix, i)
	a, err := device.New(agentOptions(s.cfg, agentSettings{
		MAC:        mac,
		ClientID:   swarmClientID(mac),
		Token:      s.token,
		TLS:        s.tls,
		Registry:   reg,
		Render:     s.render,
		Logger:     s.log,
		OnState:    d.onState,
		OnLineLost: s.onLineLost,
		OnCall:     s.onCall,
	}))
	if err != nil {
		return nil, nil, fmt.Errorf("starting device %s: %w", mac, err)
	}
	return a, hw, nil
}

// onState is the device's OnState hook. It may run on the agent's goroutine or its line's read
// loop, so it only counts; the live state is read from the agent when a status line is made.
func (d *swarmDevice) onState(st device.State) {
	if st != device.Registered {
		return
	}
	s := d.s
	s.registrations.Add(1)
	if d.registered.CompareAndSwap(false, true) && s.registeredAny.Add(1) == int64(len(s.devs)) {
		s.allRegistered.Store(int64(max(time.Since(s.start), 1)))
	}
}

// connState reports the device's state to get_device_status.
func (d *swarmDevice) connState() string {
	if a := d.agent.Load(); a != nil {
		return a.State().String()
	}
	return device.Idle.String()
}

// run starts the devices, prints status lines until ctx is cancelled, stops every device, prints
// the summary and returns nil; an error only if the devices could not be built.
func (s *swarm) run(ctx context.Context) error {
	// Device 0 is built before anything dials, so a configuration the tools or the agent refuse
	// fails here, alone, with its message.
	a0, hw0, err := s.build(0)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.start = time.Now()
	stopped := make(chan struct{})
	// The launcher owns the devices: it starts them on the ramp, then, once ctx is done, waits for
	// every one to have stopped.
	go func() {
		defer close(stopped)
		s.launch(ctx, cancel, a0, hw0)
		<-ctx.Done()
		s.agents.Wait()
	}()
	s.report(ctx, stopped)
	if p := s.err.Load(); p != nil {
		return *p
	}
	return nil
}

// launch starts device i at start + i*ramp/n, on one timer: a goroutine per device waiting for
// its turn would cost as much as the device itself. Each device is built on the goroutine that
// then runs it: building (the tools' schemas) takes most of a millisecond of CPU, which would
// hold the ramp back if the launcher did it, and this way it uses every core.
func (s *swarm) launch(ctx context.Context, cancel context.CancelFunc, a0 *device.Agent, hw0 *hardware) {
	n := s.plan.n
	timer := time.NewTimer(math.MaxInt64) // armed for each wait below
	defer timer.Stop()
	for i := range n {
		at := s.start.Add(time.Duration(float64(s.plan.ramp) * float64(i) / float64(n)))
		if wait := time.Until(at); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-ctx.Done():
				return
			}
		}
		if ctx.Err() != nil {
			return
		}
		s.agents.Go(func() {
			a, hw := a0, hw0
			if i > 0 {
				var err error
				if a, hw, err = s.build(i); err != nil {
					// Device 0 was built from the same settings, so this is not expected; a swarm
					// short of devices would measure the wrong thing, so stop.
					if s.err.CompareAndSwap(nil, &err) {
						cancel()
					}
					return
				}
			}
			s.devs[i].agent.Store(a)
			// Run returns nil once ctx is cancelled; it has no other way to end.
			if err := a.Run(ctx); err != nil {
				s.log.Error("device stopped", "err", err)
			}
			// Inert like a real device's parts at exit; the simulated ones only mute.
			if err := hw.Halt(); err != nil {
				s.log.Warn("halting simulated hardware", "err", err)
			}
		})
	}
}

// report prints a status line every interval until stopped is closed, and then the summary. The
// lines go on while the devices stop, so a slow drain is visible.
func (s *swarm) report(ctx context.Context, stopped <-chan struct{}) {
	tick := time.NewTicker(s.plan.interval)
	defer tick.Stop()
	var prev histCounts
	shown := ""
	done := ctx.Done()
	for {
		select {
		case <-tick.C:
		case <-done:
			done = nil // a nil channel: from now on, wait for the devices to stop
			continue
		case <-stopped:
			s.status(&prev, &shown)
			if s.terminal {
				io.WriteString(s.out, "\n")
			}
			s.summary()
			return
		}
		s.status(&prev, &shown)
	}
}

// status prints one status line: the latest warning first if it is new, then the counts.
func (s *swarm) status(prev *histCounts, shown *string) {
	if p := s.problem.Load(); p != nil && *p != *shown {
		*shown = *p
		if s.terminal {
			io.WriteString(s.out, "\r\x1b[K") // the status line is redrawn below the warning
		}
		fmt.Fprintf(s.errw, "devicectl swarm: latest warning: %s\n", *p)
	}
	var cur histCounts
	s.calls.snapshot(&cur)
	interval := cur.minus(prev)
	*prev = cur
	line := s.statusLine(time.Since(s.start), &interval, cur.total())
	if s.terminal {
		// Redraw in place with line wrapping off, so a line wider than the terminal is cut at the
		// edge instead of wrapping and leaving a copy behind each time.
		fmt.Fprintf(s.out, "\r\x1b[?7l%s\x1b[K\x1b[?7h", line)
	} else {
		fmt.Fprintln(s.out, line)
	}
}

// swarmStates counts the devices by the live state of their agents.
type swarmStates struct{ connected, registered, backingOff int }

func (s *swarm) states() swarmStates {
	var c swarmStates
	for i := range s.devs {
		a := s.devs[i].agent.Load()
		if a == nil {
			continue
		}
		switch a.State() {
		case device.Registered:
			c.registered++
			c.connected++
		case device.Registering, device.Stopping: // the line is up
			c.connected++
		case device.BackingOff:
			c.backingOff++
		}
	}
	return c
}

// statusLine is e.g. "12s  connected 50/50  registered 50/50  calls 120 (+10: p50 95.1µs p99
// 1.2ms max 1.3ms)", with backing off, lost, errors and messages added when not zero.
func (s *swarm) statusLine(elapsed time.Duration, interval *histCounts, total uint64) string {
	st := s.states()
	n := len(s.devs)
	var b strings.Builder
	prec := time.Second
	if s.plan.interval < time.Second {
		prec = 100 * time.Millisecond
	}
	fmt.Fprintf(&b, "%s  connected %d/%d  registered %d/%d  calls %d (+%d", elapsed.Round(prec), st.connected, n, st.registered, n, total, interval.total())
	if interval.total() > 0 {
		// The interval's max is read from the histogram too (its top bucket): an exact one would
		// need a second counter kept in step with the snapshots.
		fmt.Fprintf(&b, ": p50 %s p99 %s max %s", shortDuration(interval.quantile(0.5, math.MaxInt64)),
			shortDuration(interval.quantile(0.99, math.MaxInt64)), shortDuration(interval.quantile(1, math.MaxInt64)))
	}
	b.WriteString(")")
	for _, x := range []struct {
		name string
		v    int64
	}{{"backing off", int64(st.backingOff)}, {"lost", s.lost.Load()}, {"errors", s.callErrors.Load()}, {"messages", s.messages.Load()}} {
		if x.v != 0 {
			fmt.Fprintf(&b, "  %s %d", x.name, x.v)
		}
	}
	return b.String()
}

// summary prints the totals of the run.
func (s *swarm) summary() {
	n := len(s.devs)
	fmt.Fprintf(s.out, "swarm stopped after %s: %d devices\n", time.Since(s.start).Round(time.Millisecond), n)
	if at := s.allRegistered.Load(); at > 0 {
		fmt.Fprintf(s.out, "  registered  all %d, %s after the start", n, shortDuration(time.Duration(at)))
	} else {
		fmt.Fprintf(s.out, "  registered  %d of %d at least once", s.registeredAny.Load(), n)
	}
	fmt.Fprintf(s.out, "; %d registrations, %d lines lost\n", s.registrations.Load(), s.lost.Load())
	var all histCounts
	s.calls.snapshot(&all)
	fmt.Fprintf(s.out, "  calls       %d", all.total())
	if all.total() > 0 {
		m := time.Duration(s.calls.max.Load())
		fmt.Fprintf(s.out, ": p50 %s, p99 %s, max %s", shortDuration(all.quantile(0.5, m)), shortDuration(all.quantile(0.99, m)), shortDuration(m))
	}
	fmt.Fprintf(s.out, "; %d answered with an error\n", s.callErrors.Load())
	fmt.Fprintf(s.out, "  messages    %d\n", s.messages.Load())
	if p := s.problem.Load(); p != nil {
		fmt.Fprintf(s.errw, "devicectl swarm: latest warning: %s\n", *p)
	}
}

// shortDuration rounds d to three significant digits: 95.1µs, 1.23ms.
func shortDuration(d time.Duration) string {
	unit := time.Duration(1)
	for d >= 1000*unit && unit < time.Second {
		unit *= 10
	}
	return d.Round(unit).String()
}

// The latency histogram has buckets a sixteenth of a power of two wide, so a quantile read from
// it is within about 3% of the true one, in 8 KiB however many calls there are; adding is
// lock-free, as calls finish on many goroutines at once.
const (
	histSubBits = 4
	histBuckets = 64 << histSubBits
)

// latencyHist counts call durations.
type latencyHist struct {
	counts [histBuckets]atomic.Uint64
	max    atomic.Int64 // nanoseconds
}

// histCounts is a copy of a latencyHist's counts.
type histCounts [histBuckets]uint64

// histBucket is the bucket of d: exact below 16ns, then 16 buckets per power of two.
func histBucket(d time.Duration) int {
	v := uint64(max(d, 0))
	if v < 1<<histSubBits {
		return int(v)
	}
	shift := bits.Len64(v) - 1 - histSubBits
	return (shift+1)<<histSubBits | int(v>>shift&(1<<histSubBits-1))
}

// histMid is the middle of bucket i, the value a quantile in it is reported as.
func histMid(i int) time.Duration {
	if i < 1<<histSubBits {
		return time.Duration(i)
	}
	shift := i>>histSubBits - 1
	lo := uint64(i&(1<<histSubBits-1)|1<<histSubBits) << shift
	return time.Duration(lo + (uint64(1)<<shift)/2)
}

func (h *latencyHist) add(d time.Duration) {
	for {
		old := h.max.Load()
		if int64(d) <= old || h.max.CompareAndSwap(old, int64(d)) {
			break
		}
	}
	h.counts[histBucket(d)].Add(1)
}

func (h *latencyHist) snapshot(dst *histCounts) {
	for i := range h.counts {
		dst[i] = h.counts[i].Load()
	}
}

func (c *histCounts) total() uint64 {
	var t uint64
	for _, v := range c {
		t += v
	}
	return t
}

// minus is the calls counted in c but not in prev, an earlier snapshot.
func (c *histCounts) minus(prev *histCounts) histCounts {
	var d histCounts
	for i := range c {
		d[i] = c[i] - prev[i]
	}
	return d
}

// quantile is the q-quantile of the counted durations, no more than limit (the true maximum, when
// known: a bucket's middle may lie above it).
func (c *histCounts) quantile(q float64, limit time.Duration) time.Duration {
	total := c.total()
	if total == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(total)))
	var seen uint64
	for i, v := range c {
		seen += v
		if seen >= max(rank, 1) {
			return min(histMid(i), limit)
		}
	}
	return limit
}

// problemHandler passes records on to next and keeps the text of the latest warning or error,
// whatever next's level. With a swarm's devices failing alike (the server gone), one line saying
// why is worth more than a line per device.
type problemHandler struct {
	next slog.Handler
	last *atomic.Pointer[string]
}

func (h *problemHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn || h.next.Enabled(ctx, l)
}

func (h *problemHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		text := r.Message
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "err" {
				text += ": " + a.Value.String()
				return false
			}
			return true
		})
		h.last.Store(&text)
	}
	if !h.next.Enabled(ctx, r.Level) {
		return nil
	}
	return h.next.Handle(ctx, r)
}

func (h *problemHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &problemHandler{next: h.next.WithAttrs(as), last: h.last}
}

func (h *problemHandler) WithGroup(name string) slog.Handler {
	return &problemHandler{next: h.next.WithGroup(name), last: h.last}
}
