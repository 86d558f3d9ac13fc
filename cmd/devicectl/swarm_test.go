//go:build !devicectl_omit_swarm

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/devicectl/devicectl/device/agenttest"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/swarm"
	"github.com/devicectl/devicectl/internal/testing/leakcheck"
	"github.com/devicectl/devicectl/internal/testing/logbuf"
	"github.com/devicectl/devicectl/internal/testing/proc"
	"github.com/devicectl/devicectl/internal/testing/serveproc"
	"github.com/devicectl/devicectl/internal/testing/standin"
)

// swarmCheckLeaks fails the test if goroutines it started outlive it; register it first.
func swarmCheckLeaks(t *testing.T) { leakcheck.Check(t) }

// swarmRun is `devicectl swarm` running in the test's process.
type swarmRun struct {
	out    *lineWaiter // its stdout: the status lines, then the summary
	stderr logbuf.Buffer
	cancel context.CancelFunc
	done   chan int // its exit code
}

// runSwarm runs `devicectl swarm args...` until stop, or the test's end.
func runSwarm(t *testing.T, args ...string) *swarmRun {
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	outR, outW := io.Pipe()
	r := &swarmRun{out: newLineWaiter(outR), cancel: cancel, done: make(chan int, 1)}
	go func() {
		defer outW.Close()
		r.done <- execute(ctx, append([]string{"swarm"}, args...), strings.NewReader(""), outW, &r.stderr)
	}()
	return r
}

// stop stops the swarm as a signal does and returns its exit code.
func (r *swarmRun) stop() int {
	r.cancel()
	return <-r.done
}

// 50 devices register with distinct MACs, each answers calls on its own hardware, the status
// lines count them, and a stop leaves nothing running.
func TestSwarm(t *testing.T) {
	swarmCheckLeaks(t)
	srv, err := agenttest.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	const n = 50
	ctx := t.Context()
	sw := runSwarm(t, "-n", strconv.Itoa(n), "--server", srv.URL(), "--mac-prefix", "02:dc:7e", "--ramp", "100ms", "--interval", "50ms")
	out := sw.out

	// Wait for every device's registration, as the server reports them: no polling.
	registered := map[string]bool{}
	timeout := time.After(20 * time.Second)
	for len(registered) < n {
		select {
		case e := <-srv.Events():
			if e.Kind == agenttest.Registered {
				registered[e.Device.MAC] = true
			}
		case <-timeout:
			t.Fatalf("%d of %d devices registered within 20s", len(registered), n)
		}
	}
	var macs, want []string
	clientIDs := map[string]bool{}
	for i, d := range srv.Devices() {
		macs = append(macs, d.MAC)
		want = append(want, fmt.Sprintf("02-DC-7E-00-00-%02X", i))
		if got := d.Header.Get("Client-Id"); got != swarm.ClientID(d.MAC) || clientIDs[got] {
			t.Errorf("%s: Client-Id %q, want %q, once", d.MAC, got, swarm.ClientID(d.MAC))
		}
		clientIDs[d.Header.Get("Client-Id")] = true
		if len(d.Tools) != 3 {
			t.Errorf("%s declared %d tools, want 3", d.MAC, len(d.Tools))
		}
	}
	if !slices.Equal(macs, want) {
		t.Fatalf("registered MACs\n%v\nwant\n%v", macs, want)
	}

	// Each device gets its own volume; reading the status back shows every device kept its own,
	// which a shared speaker would not.
	picked := []int{0, 7, 23, 49}
	call := func(d *agenttest.Device, tool, input string) map[string]any {
		t.Helper()
		resp, err := d.Execute(ctx, tool, json.RawMessage(input))
		if err != nil || resp.Error != nil || resp.Result == nil {
			t.Fatalf("%s %s %s: %v %+v", d.MAC, tool, input, err, resp)
		}
		var res map[string]any
		if err := json.Unmarshal(*resp.Result, &res); err != nil {
			t.Fatal(err)
		}
		return res
	}
	devs := srv.Devices()
	for _, i := range picked {
		call(devs[i], "amplify_volume", fmt.Sprintf(`{"level": %d}`, 10+i))
	}
	for _, i := range picked {
		res := call(devs[i], "get_device_status", `{}`)
		if res["volume"] != float64(10+i) || res["connection"] != "registered" {
			t.Errorf("%s status: volume %v, connection %v; want %d, registered", devs[i].MAC, res["volume"], res["connection"], 10+i)
		}
	}
	if err := devs[3].Say(ctx, "hello"); err != nil { // 3 chunks and a final
		t.Fatal(err)
	}
	calls := 2 * len(picked)
	out.waitFor(t, fmt.Sprintf("connected %d/%d  registered %d/%d  calls %d (", n, n, n, n, calls))
	line := out.waitFor(t, "messages 4")
	if !strings.Contains(line, "registered 50/50") || strings.Contains(line, "errors") || strings.Contains(line, "lost") {
		t.Errorf("status line %q: want all registered, no errors, no lines lost", line)
	}

	if code := sw.stop(); code != exitOK {
		t.Fatalf("exit %d, want 0; stderr: %s", code, sw.stderr.String())
	}
	out.waitFor(t, "swarm stopped after")
	out.waitFor(t, fmt.Sprintf("  registered  all %d, ", n))
	summary := out.waitFor(t, fmt.Sprintf("  calls       %d: p50 ", calls))
	if !strings.HasSuffix(summary, "; 0 answered with an error") {
		t.Errorf("summary %q", summary)
	}
	out.waitFor(t, "  messages    4")
	if s := sw.stderr.String(); s != "" {
		t.Errorf("stderr: %s", s)
	}
	for _, d := range devs {
		select {
		case <-d.Done():
		case <-time.After(5 * time.Second):
			t.Fatalf("%s still connected after the stop", d.MAC)
		}
	}
}

// With no server, the devices back off; the status says so and why, once, not once per device,
// and a stop during the back-off is clean.
func TestSwarmNoServer(t *testing.T) {
	swarmCheckLeaks(t)
	srv, err := agenttest.Start(nil) // a free port, closed again: nothing listens there
	if err != nil {
		t.Fatal(err)
	}
	url := srv.URL()
	srv.Close()

	sw := runSwarm(t, "-n", "3", "--server", url, "--interval", "50ms")
	sw.out.waitFor(t, "connected 0/3  registered 0/3  calls 0 (+0)  backing off 3")
	if code := sw.stop(); code != exitOK {
		t.Fatalf("exit %d, want 0", code)
	}
	sw.out.waitFor(t, "  registered  0 of 3 at least once; 0 registrations, 0 lines lost")
	got := sw.stderr.String()
	if !strings.Contains(got, "devicectl swarm: latest warning: not connected; retrying: connecting to "+url) {
		t.Errorf("stderr %q does not say why the devices are not connected", got)
	}
	if c := strings.Count(got, "latest warning"); c > 3 {
		t.Errorf("%d warnings for 3 devices failing alike, want a few:\n%s", c, got)
	}
}

func TestSwarmBadFlags(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no count", []string{"--server", "ws://127.0.0.1:1/"}, "-n is required: how many devices to run"},
		{"no count, no server", nil, "-n is required"},
		{"zero count", []string{"-n", "0", "--server", "ws://127.0.0.1:1/"}, "-n 0: want at least 1 device"},
		{"negative count", []string{"-n", "-2", "--server", "ws://127.0.0.1:1/"}, "-n -2: want at least 1 device"},
		{"no server", []string{"-n", "3"}, "--server is required"},
		{"http server", []string{"-n", "3", "--server", "http://127.0.0.1:1/"}, `"http://127.0.0.1:1/": want a ws:// or wss:// URL`},
		{"no host", []string{"-n", "3", "--server", "ws:///x"}, "no host"},
		{"prefix not hex", []string{"-n", "3", "--server", "ws://h/", "--mac-prefix", "zz"}, `--mac-prefix: "zz" is not a MAC prefix: character 1 is "z", not a hex digit`},
		{"prefix of mixed separators", []string{"-n", "3", "--server", "ws://h/", "--mac-prefix", "02-dc:7e"}, `--mac-prefix: "02-dc:7e" is not a MAC prefix: character 6 is ":", not the separator character 3 is`},
		{"prefix too long", []string{"-n", "3", "--server", "ws://h/", "--mac-prefix", "02-00-00-00-00-00"}, "it has 6 pairs, not 1 to 5 (want 1 to 5 hex pairs such as 02-DC)"},
		{"prefix of a vendor", []string{"-n", "3", "--server", "ws://h/", "--mac-prefix", "00-1A"}, "locally administered"},
		{"prefix multicast", []string{"-n", "3", "--server", "ws://h/", "--mac-prefix", "03"}, "locally administered"},
		{"prefix too small", []string{"-n", "257", "--server", "ws://h/", "--mac-prefix", "02-00-00-00-00"}, "-n 257: --mac-prefix 02-00-00-00-00 leaves room for 256 devices"},
		{"negative ramp", []string{"-n", "3", "--server", "ws://h/", "--ramp", "-1s"}, "--ramp -1s: want 0s or more"},
		{"zero interval", []string{"-n", "3", "--server", "ws://h/", "--interval", "0s"}, "--interval 0s: want a positive duration"},
		{"bad language", []string{"-n", "3", "--server", "ws://h/", "--language", "fr"}, `"fr" is not one of zh, en`},
		{"argument", []string{"-n", "3", "--server", "ws://h/", "now"}, "takes no arguments"},
		{"negative talk", []string{"-n", "3", "--server", "ws://h/", "--talk", "-5"}, "--talk -5: want a positive number of tasks a second"},
		{"unknown route", []string{"-n", "3", "--server", "ws://h/", "--talk", "5", "--route", "rest"}, `--route "rest": want seed (POST /tasks/send) or a2a`},
		{"no callers", []string{"-n", "3", "--server", "ws://h/", "--talk", "5", "--callers", "0"}, "--callers 0: want at least 1 task in flight"},
		{"empty text", []string{"-n", "3", "--server", "ws://h/", "--talk", "5", "--text", ""}, "--text: want something for the tasks to say"},
		{"no token file", []string{"-n", "3", "--server", "ws://h/", "--talk", "5", "--talk-token-file", "/nonexistent/agent.token"}, "--talk-token-file: open /nonexistent/agent.token"},
	}
	if soft, _, ok := swarm.OpenFileLimit(); ok && soft < 2_000_000_000 {
		// Refused before anything is allocated or dialled.
		cases = append(cases, struct {
			name string
			args []string
			want string
		}{"past the open-file limit", []string{"-n", "2000000000", "--server", "ws://h/"}, "-n 2000000000 needs about 2200000064 open files"})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t.Context(), "", append([]string{"swarm"}, tc.args...)...)
			if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", r.code, r.stderr, tc.want)
			}
		})
	}
}

// TestSwarmMemory measures what a swarm device costs, with DEVICECTL_SWARM_MEASURE=1 (not under
// -race, which multiplies memory): heap in use, goroutine stacks and RSS per device at 1,000 and
// 10,000 devices, each in a fresh process, against `devicectl serve` in another (both ends in one
// process would count the server's memory too), and the idle RSS of one `devicectl run`.
//
//	DEVICECTL_SWARM_MEASURE=1 go test -run TestSwarmMemory -v -timeout 20m ./cmd/devicectl
func TestSwarmMemory(t *testing.T) {
	if n := os.Getenv("DEVICECTL_SWARM_MEASURE_CHILD"); n != "" {
		swarmMeasureChild(t, n)
		return
	}
	if os.Getenv("DEVICECTL_SWARM_MEASURE") != "1" {
		t.Skip("set DEVICECTL_SWARM_MEASURE=1 to measure the memory per swarm device")
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	if raceBuild() {
		t.Skip("the race detector multiplies memory: measure without -race")
	}
	if soft, hard, _ := swarm.OpenFileLimit(); swarm.CheckOpenFiles(10000, soft, hard) != nil {
		t.Skipf("10,000 devices need more open files: %v", swarm.CheckOpenFiles(10000, soft, hard))
	}
	bin := serveproc.Build(t)
	_, url := serveproc.Start(t, bin)
	idle := idleRunRSS(t, bin, url)
	t.Logf("devicectl run, registered and idle: RSS %s", kib(idle))

	for _, tc := range []struct {
		n    int
		ramp string // "" is the default, 1ms a device
	}{{1000, ""}, {10000, ""}, {10000, "0s"}} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSwarmMemory$", "-test.v")
		cmd.Env = append(os.Environ(), "DEVICECTL_SWARM_MEASURE_CHILD="+strconv.Itoa(tc.n),
			"DEVICECTL_SWARM_MEASURE_URL="+url, "DEVICECTL_SWARM_MEASURE_RAMP="+tc.ramp)
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("-n %d: %v\n%s", tc.n, err, b)
		}
		_, js, ok := strings.Cut(string(b), "SWARM-MEASURE ")
		js, _, _ = strings.Cut(js, "\n")
		var m swarmMeasurement
		if !ok || json.Unmarshal([]byte(js), &m) != nil {
			t.Fatalf("-n %d: no measurement in\n%s", tc.n, b)
		}
		ramp := tc.ramp
		if ramp == "" {
			ramp = (time.Duration(tc.n) * swarm.RampPerDevice).String()
		}
		per := func(v int64) int64 { return v / int64(tc.n) }
		t.Logf("-n %5d --ramp %-4s all registered in %-7s (CPU %s a device); per device: heap %s, stacks %s, RSS %s (%.1f%% of one idle run), %.1f goroutines",
			tc.n, ramp, m.Registered.Round(time.Millisecond), (m.CPU / time.Duration(tc.n)).Round(time.Microsecond), kib(per(m.Heap)), kib(per(m.Stack)), kib(per(m.RSS)),
			100*float64(per(m.RSS))/float64(idle), float64(m.Goroutines)/float64(tc.n))
	}
}

// swarmMeasurement is what a measuring child reports: growth over its baseline.
type swarmMeasurement struct {
	Registered time.Duration // from the start to the last device's first registration
	Heap       int64         // HeapInuse
	Stack      int64         // StackInuse: goroutine stacks, outside the heap
	RSS        int64         // VmRSS
	Goroutines int
	CPU        time.Duration // user and system time of the process, to all registered
}

// swarmMeasureChild runs a swarm of n devices in this process and prints its growth over the
// process's baseline, all registered and idle, after a GC.
func swarmMeasureChild(t *testing.T, n string) {
	count, err := strconv.Atoi(n)
	if err != nil {
		t.Fatal(err)
	}
	base := sampleMemory(t)
	cpu0 := cpuTime(t)
	c := swarmDefaults()
	c.Server.URL = os.Getenv("DEVICECTL_SWARM_MEASURE_URL")
	ramp := time.Duration(count) * swarm.RampPerDevice
	if r := os.Getenv("DEVICECTL_SWARM_MEASURE_RAMP"); r != "" {
		if ramp, err = time.ParseDuration(r); err != nil {
			t.Fatal(err)
		}
	}
	plan, err := checkSwarm(c, count, swarm.DefaultMACPrefix, ramp, time.Minute, swarm.OpenFileLimit)
	if err != nil {
		t.Fatal(err)
	}
	var stderr logbuf.Buffer
	s, err := swarm.FromConfig(c, plan, &swarm.ConfigIO{Out: io.Discard, Err: &stderr, Getenv: os.Getenv, Version: buildVersion()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	select {
	case <-s.Ready():
	case err := <-done:
		t.Fatalf("the swarm ended before all registered: %v; stderr: %s", err, stderr.String())
	case <-time.After(5 * time.Minute):
		n, _ := s.Registered()
		t.Fatalf("%d of %d registered after 5 minutes; stderr: %s", n, count, stderr.String())
	}
	cpu := cpuTime(t) - cpu0
	settledRSS(t, "self") // idle: the dials and registrations are over, their garbage is left
	m := sampleMemory(t)
	_, m.Registered = s.Registered()
	m.CPU = cpu
	m.Heap -= base.Heap
	m.Stack -= base.Stack
	m.RSS -= base.RSS
	m.Goroutines -= base.Goroutines
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(m)
	fmt.Printf("SWARM-MEASURE %s\n", b)
}

// sampleMemory collects garbage, returns freed memory to the system and reads what is left.
func sampleMemory(t *testing.T) swarmMeasurement {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return swarmMeasurement{Heap: int64(ms.HeapInuse), Stack: int64(ms.StackInuse), RSS: proc.RSS(t, "self"), Goroutines: runtime.NumGoroutine()}
}

// cpuTime is the user and system time this process has used, from /proc/self/stat.
func cpuTime(t *testing.T) time.Duration {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	// After the command name, in parentheses, come the fields from the 3rd: utime and stime are
	// the 14th and 15th, in clock ticks (100 a second on Linux).
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	utime, err1 := strconv.ParseInt(f[14-3], 10, 64)
	stime, err2 := strconv.ParseInt(f[15-3], 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("/proc/self/stat: %q", s)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// idleRunRSS is the RSS of one `devicectl run` with simulated hardware, registered and idle for a
// while; it is stopped before the swarms are measured.
func idleRunRSS(t *testing.T, bin, url string) int64 {
	text := "server:\n  url: " + url + "\ndevice:\n  mac: 02-00-00-00-00-01\n  state_dir: " + t.TempDir() +
		"\nhardware:\n  mode: sim\nlog:\n  level: info\n  format: text\n"
	config := standin.WriteFile(t, "run.yaml", text)
	d := serveproc.Run(t, bin, config)
	defer d.Stop()
	if _, ok := d.Err.WaitUntil(t, "the run device's registration", d.Exited, func(s string) bool { return strings.Contains(s, "msg=registered") }); !ok {
		t.Fatal("devicectl run exited before it registered") // its stderr is logged at the end
	}
	return settledRSS(t, strconv.Itoa(d.Pid))
}

// settledRSS returns the RSS of the process pid ("self" for this one) once it has stopped
// changing: the same over ten readings a tenth of a second apart. No signal says a process has
// finished growing after its start, so this polls what is measured, for at most 30s.
func settledRSS(t *testing.T, pid string) int64 {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	rss, same := proc.RSS(t, pid), 0
	for deadline := time.Now().Add(30 * time.Second); same < 10; <-tick.C {
		if time.Now().After(deadline) {
			t.Logf("the RSS of %s still changes after 30s: measuring it as it is", pid)
			break
		}
		if r := proc.RSS(t, pid); r == rss {
			same++
		} else {
			rss, same = r, 0
		}
	}
	return rss
}

// raceBuild reports whether this test binary was built with -race.
func raceBuild() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

func kib(b int64) string { return fmt.Sprintf("%.1f KiB", float64(b)/1024) }

// --talk sends tasks through serve's HTTP API with the token of --talk-token-file, else
// $DEVICECTL_AGENT_TOKEN: the right one completes tasks, a wrong one is counted as http 401.
func TestSwarmTalk(t *testing.T) {
	swarmCheckLeaks(t)
	addr, tokenFile := startAgent(t, config.Defaults(), "talk-token")
	tasks := regexp.MustCompile(`registered 2/2  calls (\d+) .*  tasks (\d+) \(`)
	for _, tc := range []struct {
		name string
		args []string
		env  string
		want string // a line of the summary
	}{
		{"token file", []string{"--talk-token-file", tokenFile}, "", "; 0 failed"},
		{"token env", nil, "talk-token", "; 0 failed"},
		{"wrong token", nil, "not-the-token", " failed: http 401 "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("DEVICECTL_AGENT_TOKEN", tc.env)
			sw := runSwarm(t, append([]string{"-n", "2", "--server", "ws://" + addr + "/", "--interval", "50ms", "--talk", "100", "--callers", "2"}, tc.args...)...)
			for {
				line := sw.out.waitFor(t, "  tasks ")
				m := tasks.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				// Stop once the interval shows what is tested: tasks done, or refused ones.
				if tc.env == "not-the-token" && strings.Contains(line, "http 401") || tc.env != "not-the-token" && m[2] != "0" {
					break
				}
			}
			if code := sw.stop(); code != exitOK {
				t.Fatalf("exit %d; stderr %s", code, sw.stderr.String())
			}
			sw.out.waitFor(t, tc.want)
		})
	}
}
