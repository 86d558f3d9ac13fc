//go:build linux

package netfault

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The device's settings, short so that a fault and its recovery take seconds. The bounds the
// test asserts are made of these.
const (
	mac        = "02-4E-46-00-00-01" // locally administered: no real board's
	listenPort = "8765"

	pingInterval = time.Second
	// With 1s, a ping and pong of which TCP lost one twice under netem's 10% loss (retransmits
	// after ~0.3s and ~0.6s, plus 100ms of delay) would end a healthy line now and then.
	pingTimeout = 2 * time.Second
	// A dial sent while the link is down waits for this before the device backs off again: it is
	// part of the bound on recovery after a partition.
	handshakeTimeout = 2 * time.Second
	backoffMin       = 200 * time.Millisecond
	backoffMax       = 2 * time.Second
	// Shorter than the sessions between faults, so the back-off restarts from backoffMin after
	// each; the cap is checked on every wait anyway.
	backoffReset = 3 * time.Second
	drainTimeout = time.Second

	// slack is what a bound allows beyond the device's own timers: starting a process, a
	// race-built device, and a busy machine. Run by go test ./... beside the other packages' race
	// tests on two CPUs (load average 11), the device logged a second after the line closed
	// that it backs off, where it takes a millisecond on an idle machine; 1.5s was not enough.
	// The bounds still catch what matters: a keepalive that does not fire (TCP alone takes
	// minutes), a back-off past its cap (30s by default).
	slack = 2500 * time.Millisecond
	// late is how long past a bound the test still waits, to say how late something came
	// rather than only that it did not come in time.
	late = 10 * time.Second
)

// binEnv names a devicectl binary to test instead of building one (scripts/netfault.sh).
const binEnv = "DEVICECTL_NETFAULT_BIN"

// TestNetworkFaults runs the device against the stand-in server across a real veth pair and
// breaks the line between them in the ways a board's network breaks: packets delayed and lost,
// the link gone, the server frozen, stopped and crashed. See the package documentation.
func TestNetworkFaults(t *testing.T) {
	checkPrerequisites(t)
	n := setupNetns(t) // before the build: a container without the capabilities skips at once
	bin := devicectlBinary(t)
	r := &rig{
		owner: t,
		n:     n,
		bin:   bin,
		dir:   t.TempDir(),
		url:   "ws://" + net.JoinHostPort(n.nsIP, listenPort) + "/",
	}
	t.Logf("namespace %s: device %s on %s, server %s on %s", n.name, n.hostIP, n.hostVeth, n.nsIP, n.nsVeth)

	r.startServer(t)
	r.startDevice(t)
	_, reg := r.within(t, r.dev.stderr, 0, r.dev.started, 5*time.Second, "the device's first registration", registeredMsg)
	r.within(t, r.srv.stdout, 0, r.dev.started, 5*time.Second, "the server's + line for the device", serverRegistered)
	r.measure("first registration after the process started", reg.at.Sub(r.dev.started), 5*time.Second)
	r.callVolume(t, 3, 5*time.Second)

	// Each fault starts from a registered device; after a failed one the state is unknown.
	steps := []struct {
		name string
		run  func(*testing.T)
	}{
		{"delay_and_loss", r.delayAndLoss},
		{"partition", r.partition},
		{"server_hang", r.serverHang},
		{"server_restart", func(t *testing.T) { r.serverDown(t, syscall.SIGTERM) }},
		{"server_crash", func(t *testing.T) { r.serverDown(t, syscall.SIGKILL) }},
	}
	for _, s := range steps {
		if !t.Run(s.name, s.run) {
			t.Fatalf("%s failed: the faults after it are not run", s.name)
		}
	}

	r.finalChecks(t)
	r.stopDevice(t)
	for _, m := range r.measured {
		t.Log(m)
	}
}

// devicectlBinary builds devicectl for this machine (with -race when the test has it), or
// returns the one DEVICECTL_NETFAULT_BIN names.
func devicectlBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv(binEnv); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("%s: %v", binEnv, err)
		}
		return bin
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "env", "GOHOSTOS", "GOHOSTARCH").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	host := strings.Fields(string(out))
	if len(host) != 2 {
		t.Fatalf("go env GOHOSTOS GOHOSTARCH printed %q", out)
	}
	// Under make test-arm this test binary runs in qemu; the device would still be a host binary,
	// so nothing would be learnt for the emulation's cost.
	if host[0] != runtime.GOOS || host[1] != runtime.GOARCH {
		t.Skipf("the test runs as %s/%s on a %s/%s machine (emulated): the device under test would be the host's binary anyway",
			runtime.GOOS, runtime.GOARCH, host[0], host[1])
	}
	bin := filepath.Join(t.TempDir(), "devicectl")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	args = append(args, "github.com/devicectl/devicectl/cmd/devicectl")
	build := exec.CommandContext(ctx, "go", args...)
	build.Env = append(os.Environ(), "GOOS="+host[0], "GOARCH="+host[1])
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return bin
}

// rig is the device, the server and the namespace between them, with what the test has sent.
type rig struct {
	owner *testing.T // the top-level test: owns the processes, which outlive the subtests
	n     *netns
	bin   string
	dir   string
	url   string

	dev     *proc
	srv     *server   // the server running now
	servers []*server // every server started, for the failure report

	levels   []int    // the amplify_volume level of every call made, in order; each is new
	measured []string // recovery times, printed at the end
}

// registeredMsg matches the device's log line for an accepted registration.
var registeredMsg = logMsg("registered", func(e entry) bool { return e.str("component") == "agent" })

// serverRegistered matches the stand-in's console line for the device's registration.
func serverRegistered(l string) bool { return strings.HasPrefix(l, "+ "+mac+" registered ") }

// fatalf fails t with the message and the last lines of both processes.
func (r *rig) fatalf(t *testing.T, format string, args ...any) {
	t.Helper()
	t.Fatalf("%s\n\n%s", fmt.Sprintf(format, args...), r.report())
}

// report is what a failure shows: the last lines of the device's log and of the servers'
// consoles and logs, and how the processes ended.
func (r *rig) report() string {
	var b strings.Builder
	if r.dev != nil {
		// A line per hook run would crowd out the connection's story; the calls are in the
		// server's console.
		fmt.Fprintf(&b, "device (devicectl run) stderr, last 40 lines but hook runs:\n%s", r.dev.stderr.tail(40, logMsg("hook ran")))
		if !r.dev.running() {
			fmt.Fprintf(&b, "device exited: %v\n", r.dev.err)
		}
	}
	from := max(0, len(r.servers)-2) // the one before the current one shows what was lost
	for _, s := range r.servers[from:] {
		fmt.Fprintf(&b, "%s (devicectl serve) console, last 15 lines:\n%s", s.name, s.stdout.tail(15, nil))
		fmt.Fprintf(&b, "%s stderr, last 20 lines:\n%s", s.name, s.stderr.tail(20, nil))
		if !s.running() {
			fmt.Fprintf(&b, "%s exited: %v\n", s.name, s.err)
		}
	}
	return b.String()
}

// within waits, from line mark of l, for a line that match accepts, and fails the test unless
// it came within bound of since. It returns the line and its index.
func (r *rig) within(t *testing.T, l *lineLog, mark int, since time.Time, bound time.Duration, what string, match func(string) bool) (int, logLine) {
	t.Helper()
	ctx, cancel := context.WithDeadline(t.Context(), since.Add(bound+late))
	defer cancel()
	i, line, err := l.waitFor(ctx, mark, match)
	if err != nil {
		r.fatalf(t, "%s: not within %s (bound %s): %v", what, bound+late, bound, err)
	}
	if took := line.at.Sub(since); took > bound {
		r.fatalf(t, "%s: after %s, past the bound of %s", what, took.Round(time.Millisecond), bound)
	}
	return i, line
}

// measure records a measured time, and its bound, for the summary.
func (r *rig) measure(what string, took, bound time.Duration) {
	r.measured = append(r.measured, fmt.Sprintf("%-58s %7s  (bound %s)", what+":", took.Round(time.Millisecond), bound))
}

// startServer starts `devicectl serve` in the namespace and waits until it listens.
func (r *rig) startServer(t *testing.T) {
	t.Helper()
	// Off loopback serve needs a token for its HTTP API (the A2A routes) and, as devices need none
	// here, agent.devices_open; it keeps its database where the restarts of this test find it.
	token := filepath.Join(r.dir, "http-token")
	if err := os.WriteFile(token, []byte("netfault-http-token\n"), 0o600); err != nil {
		r.fatalf(t, "writing serve's token: %v", err)
	}
	config := filepath.Join(r.dir, "serve.yaml")
	yaml := fmt.Sprintf("agent:\n  token_file: %s\n  devices_open: true\n  state_dir: %s\n", token, filepath.Join(r.dir, "agent-state"))
	if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
		r.fatalf(t, "writing serve's config: %v", err)
	}
	args := r.n.exec(r.bin, "serve", "--config", config, "--listen", net.JoinHostPort(r.n.nsIP, listenPort),
		"--ping-interval", pingInterval.String(), "--log-format", "json", "--log-level", "debug")
	s := &server{proc: startProc(r.owner, fmt.Sprintf("server #%d", len(r.servers)+1), true, "ip", args...)}
	r.servers = append(r.servers, s)
	r.srv = s
	r.within(t, s.stderr, 0, s.started, 5*time.Second, s.name+" listening", func(l string) bool {
		return strings.HasPrefix(l, "devicectl serve: listening at ")
	})
}

// startDevice writes the device's config and starts `devicectl run` on the host.
func (r *rig) startDevice(t *testing.T) {
	t.Helper()
	// Each call's event, one JSON line on the hook's stdin, is appended to a file: what the
	// device ran, counted on its side. Hooks run one at a time, so the lines never interleave.
	hook, err := json.Marshal([]string{"/bin/sh", "-c", `cat >> "$0"`, r.hooksFile()})
	if err != nil {
		t.Fatal(err)
	}
	config := fmt.Sprintf(`connection:
  ping_timeout: %s
  handshake_timeout: %s
  backoff_min: %s
  backoff_max: %s
  backoff_reset: %s
execution:
  drain_timeout: %s
hooks:
  tool_executed: %s
`, pingTimeout, handshakeTimeout, backoffMin, backoffMax, backoffReset, drainTimeout, hook)
	path := filepath.Join(r.dir, "devicectl.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	r.dev = startProc(r.owner, "device", false, r.bin, "run", "--config", path,
		"--server", r.url, "--hardware", "sim", "--mac", mac, "--state-dir", filepath.Join(r.dir, "state"),
		"--ping-interval", pingInterval.String(), "--log-format", "json", "--log-level", "debug")
}

func (r *rig) hooksFile() string { return filepath.Join(r.dir, "tool_executed.jsonl") }

// callVolume makes n amplify_volume calls through the server's console, each with a level no
// call had before, and checks that each is answered, with success and its own level, and that
// the device ran each exactly once. It returns how long each call took.
func (r *rig) callVolume(t *testing.T, n int, timeout time.Duration) []time.Duration {
	t.Helper()
	var took []time.Duration
	seen := map[string]bool{}
	for range n {
		level := len(r.levels) + 1
		if level > 100 {
			t.Fatal("more than 100 calls: the levels would repeat and the count could not tell calls apart")
		}
		ctx, cancel := context.WithTimeout(t.Context(), timeout)
		start := time.Now()
		line, err := r.srv.consoleAnswer(ctx, fmt.Sprintf(`call %s amplify_volume {"level": %d}`, mac, level))
		cancel()
		if err != nil {
			r.fatalf(t, "call with level %d: %v", level, err)
		}
		took = append(took, time.Since(start))
		var a rpcAnswer
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			r.fatalf(t, "call with level %d: the console printed %q, not the device's response", level, line)
		}
		if a.Error != nil {
			r.fatalf(t, "call with level %d: answered with error %d %s", level, a.Error.Code, a.Error.Message)
		}
		var res struct {
			Status string `json:"status"`
			Level  int    `json:"level"`
		}
		if err := json.Unmarshal(a.Result, &res); err != nil || res.Status != "success" || res.Level != level {
			r.fatalf(t, "call with level %d: answered %s, want success with level %d", level, a.Result, level)
		}
		if seen[a.ID] {
			r.fatalf(t, "call with level %d: answered with id %s, the id of an earlier call", level, a.ID)
		}
		seen[a.ID] = true
		r.levels = append(r.levels, level)
	}
	r.checkRanOnce(t)
	return took
}

// checkRanOnce checks that the device ran every call made so far exactly once, by the
// tool_executed hook's record, and that no peer received an answer twice.
func (r *rig) checkRanOnce(t *testing.T) {
	t.Helper()
	// The hook runs after each answer, queued; the device logs every run. Once there are as many
	// runs as calls, the record holds every call; a second run of one shows as a count of 2.
	isRun := func(l string) bool {
		e := parseEntry(l)
		return e != nil && e.str("component") == "hooks" && e.str("event") == "tool_executed"
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	next := 0
	for range r.levels {
		i, _, err := r.dev.stderr.waitFor(ctx, next, isRun)
		if err != nil {
			r.fatalf(t, "waiting for the tool_executed hook of each of %d calls: %v", len(r.levels), err)
		}
		next = i + 1
	}
	b, err := os.ReadFile(r.hooksFile())
	if err != nil {
		r.fatalf(t, "the tool_executed hook's record: %v", err)
	}
	ran := map[int]int{}
	total := 0
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var ev struct{ Tool, Input, Status string }
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			r.fatalf(t, "the tool_executed hook wrote %q: %v", line, err)
		}
		if ev.Tool != "amplify_volume" {
			continue
		}
		var in struct{ Level int }
		if err := json.Unmarshal([]byte(ev.Input), &in); err != nil {
			r.fatalf(t, "tool_executed input %q: %v", ev.Input, err)
		}
		ran[in.Level]++
		total++
	}
	var wrong []string
	for _, level := range r.levels {
		if ran[level] != 1 {
			wrong = append(wrong, fmt.Sprintf("level %d ran %d times", level, ran[level]))
		}
	}
	if total != len(r.levels) {
		wrong = append(wrong, fmt.Sprintf("%d amplify_volume runs for %d calls", total, len(r.levels)))
	}
	// jsonrpc2 drops a second response to one request with this debug line.
	dup := func(l string) bool { return strings.Contains(l, "with no corresponding request") }
	for _, s := range r.servers {
		for _, l := range s.stderr.snapshot(0) {
			if dup(l.text) {
				wrong = append(wrong, s.name+" received an answer twice: "+l.text)
			}
		}
	}
	if len(wrong) > 0 {
		r.fatalf(t, "calls not run exactly once: %s\ntool_executed record:\n%s", strings.Join(wrong, "; "), b)
	}
}

// delayAndLoss: with netem on the server's side, every call is still answered, each run once.
func (r *rig) delayAndLoss(t *testing.T) {
	if _, err := exec.LookPath("tc"); err != nil {
		skipOrFail(t, "tc (iproute2) is not on PATH: apt-get install iproute2")
	}
	netem := []string{"tc", "-n", r.n.name, "qdisc", "add", "dev", r.n.nsVeth, "root", "netem", "delay", "100ms", "loss", "10%"}
	out, err := ipRun(t.Context(), netem...)
	if err != nil {
		// Only a kernel without the qdisc is a reason to skip; another failure is this test's own.
		if strings.Contains(out, "Specified qdisc kind is unknown") {
			t.Skipf("the kernel has no netem qdisc (sch_netem), so delay and loss are not tested: "+
				"`tc qdisc add dev %s root netem delay 100ms loss 10%%` in the namespace said %q; "+
				"loss is not faked in userspace, which would not put the kernel's TCP under loss",
				r.n.nsVeth, strings.TrimSpace(out))
		}
		r.fatalf(t, "adding netem: %v", err)
	}
	removed := false
	remove := func() {
		if removed {
			return
		}
		removed = true
		if _, err := ipRun(context.Background(), "tc", "-n", r.n.name, "qdisc", "del", "dev", r.n.nsVeth, "root"); err != nil {
			t.Errorf("removing netem: %v", err)
		}
	}
	t.Cleanup(remove)

	mark := r.dev.stderr.len()
	took := r.callVolume(t, 12, 20*time.Second)
	remove()
	// Every call went out of the namespace through netem's 100ms: a faster one means the qdisc
	// did not apply, and this subtest tested nothing.
	if fastest := slices.Min(took); fastest < 100*time.Millisecond {
		r.fatalf(t, "a call under netem delay 100ms took %s: the delay is not in effect", fastest)
	}
	reconnects := 0
	for _, l := range r.dev.stderr.snapshot(mark) {
		if logMsg("not connected; retrying")(l.text) {
			reconnects++
		}
	}
	slices.Sort(took)
	t.Logf("netem delay 100ms loss 10%%: %d calls answered, each run once; round trips %s..%s (median %s); %d reconnects",
		len(took), took[0].Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond),
		took[len(took)/2].Round(time.Millisecond), reconnects)
}

// partition takes the link down on the server's side for longer than a ping interval and
// timeout: the device must notice by its keepalive alone (no FIN, no RST comes), back off, keep
// dialling, and register again soon after the link is back.
func (r *rig) partition(t *testing.T) {
	ctx := t.Context()
	devMark, srvMark := r.dev.stderr.len(), r.srv.stdout.len()
	if _, err := ipRun(ctx, "-n", r.n.name, "link", "set", r.n.nsVeth, "down"); err != nil {
		r.fatalf(t, "partition: %v", err)
	}
	// The link goes down as ip ends: timed from before, a slow start of ip (a loaded machine)
	// would count against the device.
	down := time.Now()

	// The next ping goes out within a ping interval and gets no pong within the timeout.
	detect := pingInterval + pingTimeout + slack
	i, noPong := r.within(t, r.dev.stderr, devMark, down, detect, "the device noticing the dead line (no pong)",
		logMsg("no pong from the peer: closing the connection"))
	i, _ = r.within(t, r.dev.stderr, i+1, down, detect, "the device backing off for the dead line",
		logMsg("not connected; retrying", attrContains("err", "no pong")))
	// While the link is down it keeps dialling: a dial fails (no route, or the handshake timeout)
	// and it backs off again.
	_, failed := r.within(t, r.dev.stderr, i+1, noPong.at, backoffMax+handshakeTimeout+slack, "a failed dial while the link is down",
		logMsg("not connected; retrying", attrContains("err", "connecting to")))
	// The partition lasts longer than ping interval + timeout whatever the timing above: this is
	// the fault's length, not a wait for the device.
	if rest := pingInterval + pingTimeout - time.Since(down); rest > 0 {
		time.Sleep(rest)
	}
	for _, l := range r.dev.stderr.snapshot(devMark) {
		if registeredMsg(l.text) {
			r.fatalf(t, "the device registered while the link was down: %s", l.text)
		}
	}

	upMark := r.dev.stderr.len()
	if _, err := ipRun(ctx, "-n", r.n.name, "link", "set", r.n.nsVeth, "up"); err != nil {
		r.fatalf(t, "ending the partition: %v", err)
	}
	up := time.Now()
	// At worst a dial sent into the dead link waits out the handshake timeout, then one back-off.
	bound := handshakeTimeout + backoffMax + slack
	_, reg := r.within(t, r.dev.stderr, upMark, up, bound, "registration after the link came back", registeredMsg)
	_, seen := r.within(t, r.srv.stdout, srvMark, up, bound, "the server's + line after the link came back", serverRegistered)

	r.measure("partition: dead line noticed after the link went down", noPong.at.Sub(down), detect)
	r.measure("partition: registered after the link came up", reg.at.Sub(up), bound)
	t.Logf("link down %s; no pong noticed after %s; first failed dial after %s; registered %s after the link came up (server saw it after %s; bound %s)",
		up.Sub(down).Round(time.Millisecond), noPong.at.Sub(down).Round(time.Millisecond), failed.at.Sub(down).Round(time.Millisecond),
		reg.at.Sub(up).Round(time.Millisecond), seen.at.Sub(up).Round(time.Millisecond), bound)
	r.callVolume(t, 3, 5*time.Second)
}

// serverHang freezes the server (SIGSTOP) with its kernel still up: TCP stays healthy and even
// accepts new connections into the listen backlog, but no pong and no handshake answer comes.
// The device must notice by its keepalive, give up each dial at the handshake timeout, and
// register again once the server runs on (SIGCONT).
func (r *rig) serverHang(t *testing.T) {
	devMark, srvMark := r.dev.stderr.len(), r.srv.stdout.len()
	stop := time.Now()
	r.srv.signal(syscall.SIGSTOP)
	t.Cleanup(func() { r.srv.signal(syscall.SIGCONT) }) // a failure must not leave it frozen

	detect := pingInterval + pingTimeout + slack
	i, noPong := r.within(t, r.dev.stderr, devMark, stop, detect, "the device noticing the frozen server (no pong)",
		logMsg("no pong from the peer: closing the connection"))
	// The next dial connects (the kernel accepts) and waits for an upgrade that never comes.
	j, failed := r.within(t, r.dev.stderr, i+1, noPong.at, backoffMax+handshakeTimeout+slack, "a dial to the frozen server given up",
		logMsg("not connected; retrying", attrContains("err", "connecting to")))
	for _, l := range r.dev.stderr.snapshot(devMark) {
		if registeredMsg(l.text) {
			r.fatalf(t, "the device registered with a frozen server: %s", l.text)
		}
	}

	cont := time.Now()
	r.srv.signal(syscall.SIGCONT)
	// A dial waiting in the backlog is answered as soon as the server runs on; otherwise the
	// device is in a back-off of at most backoff_max.
	bound := backoffMax + slack
	_, reg := r.within(t, r.dev.stderr, j+1, cont, bound, "registration after the server ran on", registeredMsg)
	_, seen := r.within(t, r.srv.stdout, srvMark, cont, bound, "the server's + line after it ran on", serverRegistered)

	r.measure("server hang: dead line noticed after SIGSTOP", noPong.at.Sub(stop), detect)
	r.measure("server hang: registered after SIGCONT", reg.at.Sub(cont), bound)
	t.Logf("server frozen %s; no pong noticed after %s; a dial given up after %s (%s); registered %s after SIGCONT (server saw it after %s; bound %s)",
		cont.Sub(stop).Round(time.Millisecond), noPong.at.Sub(stop).Round(time.Millisecond), failed.at.Sub(stop).Round(time.Millisecond),
		parseEntry(failed.text).str("err"), reg.at.Sub(cont).Round(time.Millisecond), seen.at.Sub(cont).Round(time.Millisecond), bound)
	r.callVolume(t, 2, 5*time.Second)
}

// serverDown stops the server with sig (SIGTERM: it closes the lines; SIGKILL: the kernel does),
// checks the device notices at once and backs off while it is refused, then starts a new server
// and checks the device registers with it within one back-off.
func (r *rig) serverDown(t *testing.T, sig syscall.Signal) {
	old := r.srv
	devMark := r.dev.stderr.len()
	stop := time.Now()
	old.signal(sig)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	err := old.wait(ctx)
	cancel()
	if old.running() {
		r.fatalf(t, "%s did not exit within 5s of %s", old.name, sig)
	}
	if sig == syscall.SIGTERM && err != nil {
		r.fatalf(t, "the server did not exit 0 on SIGTERM: %v", err)
	}

	// A closed line is seen at once (a close frame, or FIN/RST): not after a keepalive timeout.
	// A server stopping (SIGTERM) says so with close 1001, which is no fault to the device.
	gone := logMsg("not connected; retrying", attrContains("err", "connection lost"))
	if sig == syscall.SIGTERM {
		gone = logMsg("the server closed the line", attrContains("reason", "StatusGoingAway"))
	}
	i, lost := r.within(t, r.dev.stderr, devMark, stop, slack, "the device noticing the server gone", gone)
	// The server stays down until a dial has been refused and the device backs off again.
	i, _ = r.within(t, r.dev.stderr, i+1, lost.at, backoffMax+slack, "a refused dial while the server is down",
		logMsg("not connected; retrying", attrContains("err", "connection refused")))

	r.startServer(t)
	started := r.srv.started
	bound := backoffMax + slack
	_, reg := r.within(t, r.dev.stderr, i+1, started, bound, "registration with the new server", registeredMsg)
	_, seen := r.within(t, r.srv.stdout, 0, started, bound, "the new server's + line", serverRegistered)

	what := map[syscall.Signal]string{syscall.SIGTERM: "server restart (SIGTERM)", syscall.SIGKILL: "server crash (SIGKILL)"}[sig]
	r.measure(what+": registered after the new server started", reg.at.Sub(started), bound)
	t.Logf("%s: line lost noticed after %s; server down %s; registered %s after the new server started (server saw it after %s; bound %s)",
		what, lost.at.Sub(stop).Round(time.Millisecond), started.Sub(stop).Round(time.Millisecond),
		reg.at.Sub(started).Round(time.Millisecond), seen.at.Sub(started).Round(time.Millisecond), bound)
	r.callVolume(t, 2, 5*time.Second)
}

// finalChecks: after every fault the same process answers, and its log shows nothing amiss.
func (r *rig) finalChecks(t *testing.T) {
	t.Helper()
	if !r.dev.running() {
		r.fatalf(t, "the device exited during the faults: %v", r.dev.err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	line, err := r.srv.consoleAnswer(ctx, "call "+mac+" get_device_status {}")
	cancel()
	if err != nil {
		r.fatalf(t, "final call: %v", err)
	}
	var a rpcAnswer
	var st struct {
		Status     string `json:"status"`
		Connection string `json:"connection"`
		Uptime     int64  `json:"uptime_seconds"`
	}
	if json.Unmarshal([]byte(line), &a) != nil || a.Error != nil || json.Unmarshal(a.Result, &st) != nil {
		r.fatalf(t, "final call: the console printed %q, want the device's status", line)
	}
	// The uptime counts from the process's start: a device that had restarted itself (or been
	// restarted) would report less than the time since the test started it.
	alive := time.Since(r.dev.started)
	if st.Status != "success" || st.Connection != "registered" || time.Duration(st.Uptime)*time.Second < alive-2*time.Second {
		r.fatalf(t, "final status %s: want success, registered, uptime about %s (the same process)", a.Result, alive.Round(time.Second))
	}
	t.Logf("final status after %s: %s", alive.Round(time.Second), a.Result)

	// Every back-off wait within backoff_min..backoff_max, and nothing in the log that means a
	// crash, a race or a bug (an error-level line).
	var bad []string
	waits := 0
	for _, l := range r.dev.stderr.snapshot(0) {
		e := parseEntry(l.text)
		switch {
		case e == nil:
			bad = append(bad, "not a log line: "+l.text) // a panic, a race report
		case e.str("level") == "ERROR":
			bad = append(bad, "error: "+l.text)
		case e.str("msg") == "not connected; retrying":
			waits++
			ns, _ := e["retry_in"].(float64)
			if d := time.Duration(ns); d < backoffMin || d > backoffMax {
				bad = append(bad, fmt.Sprintf("back-off of %s outside %s..%s: %s", d, backoffMin, backoffMax, l.text))
			}
		}
	}
	if waits == 0 {
		bad = append(bad, "no back-off logged at all")
	}
	if len(bad) > 0 {
		r.fatalf(t, "the device's log:\n  %s", strings.Join(bad, "\n  "))
	}
	t.Logf("%d back-off waits, all within %s..%s; %d calls, each run once", waits, backoffMin, backoffMax, len(r.levels))
}

// stopDevice sends SIGTERM: the device closes the line and exits 0.
func (r *rig) stopDevice(t *testing.T) {
	t.Helper()
	srvMark := r.srv.stdout.len()
	stop := time.Now()
	r.dev.signal(syscall.SIGTERM)
	// The drain (nothing runs), the close handshake, the hooks' queue; a race-built device also
	// sleeps a second at exit (GORACE atexit_sleep_ms) to catch late races.
	bound := drainTimeout + 2*slack
	ctx, cancel := context.WithTimeout(t.Context(), bound+late)
	err := r.dev.wait(ctx)
	cancel()
	took := time.Since(stop)
	if err != nil {
		r.fatalf(t, "SIGTERM: the device ended with %v, want exit status 0", err)
	}
	if took > bound {
		r.fatalf(t, "SIGTERM: the device took %s to exit, past the bound of %s", took.Round(time.Millisecond), bound)
	}
	r.measure("SIGTERM: exited 0 after", took, bound)
	if _, _, err := r.dev.stderr.waitFor(t.Context(), 0, logMsg("stopped")); err != nil {
		r.fatalf(t, "SIGTERM: no \"stopped\" log line")
	}
	r.within(t, r.srv.stdout, srvMark, stop, bound, "the server's - line after SIGTERM", func(l string) bool {
		return l == "- "+mac+" disconnected"
	})
}
