package benchserve

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/devicectl/devicectl/internal/swarm"
	"github.com/devicectl/devicectl/internal/testing/leakcheck"
	"github.com/devicectl/devicectl/internal/testing/serveproc"
)

const (
	// taskDevices is the swarm the tasks go through: enough that no device is the bottleneck.
	taskDevices = 100
	// taskRate is the rate asked of the load generator: above what serve answers on a small
	// machine, so the figure is serve's throughput, not the rate asked.
	taskRate = 5000
	// warmup is the status lines skipped once tasks flow (a second each): connections, the
	// database's first pages, the runtime's heap growth.
	warmup = 2
	// window is the status lines measured over, a second each.
	window = 8
	// settle is how long serve is left alone before its RSS is read: the runtime returns freed
	// memory in the background.
	settle = 3 * time.Second
	// clockTick is the unit of utime and stime in /proc/PID/stat (USER_HZ, 100 on Linux).
	clockTick = 10 * time.Millisecond
)

// TestMain removes the binary the benchmarks built.
func TestMain(m *testing.M) {
	code := leakcheck.Main(m)
	serveproc.Remove()
	os.Exit(code)
}

// profileDir, from BENCHSERVE_PROFILE, is where the benchmarks write serve's profiles: CPU over
// each measured window, heap and goroutines where RSS is read. Empty: no profiles, and serve
// built without its profiling hook (cmd/devicectl's devicectl_pprof tag).
var profileDir = os.Getenv("BENCHSERVE_PROFILE")

// setup builds devicectl once per test binary; it skips where there is no /proc.
func setup(b *testing.B) string {
	b.Helper()
	if runtime.GOOS != "linux" {
		b.Skip("reads /proc/PID/stat and status")
	}
	if profileDir != "" {
		return serveproc.Build(b, "devicectl_pprof")
	}
	return serveproc.Build(b)
}

// startServe starts serve; with profileDir set, with its profiling hook on a free loopback port,
// whose address it returns ("" without).
func startServe(b *testing.B, bin string) (*os.Process, string, string) {
	b.Helper()
	if profileDir == "" {
		serve, url := serveproc.Start(b, bin, "--state-dir", b.TempDir())
		return serve, url, ""
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	// Only serve's environment: the swarms run the same binary.
	os.Setenv("DEVICECTL_PPROF", addr)
	serve, url := serveproc.Start(b, bin, "--state-dir", b.TempDir())
	os.Unsetenv("DEVICECTL_PPROF")
	return serve, url, addr
}

// saveProfile writes serve's profile name (a net/http/pprof path under /debug/pprof/, with its
// query) to file in profileDir. It does nothing without a profiling address.
func saveProfile(b *testing.B, addr, name, file string) {
	if addr == "" {
		return
	}
	resp, err := http.Get("http://" + addr + "/debug/pprof/" + name)
	if err != nil {
		b.Errorf("profile %s: %v", name, err)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Errorf("profile %s: %s", name, resp.Status)
		return
	}
	f, err := os.Create(filepath.Join(profileDir, file))
	if err == nil {
		_, err = io.Copy(f, resp.Body)
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		b.Errorf("profile %s: %v", name, err)
	}
}

// swarmProc is a `devicectl swarm` process whose status lines are read as they come.
type swarmProc struct {
	cmd   *exec.Cmd
	lines chan line
}

type line struct {
	text string
	at   time.Time // when it was read
}

func startSwarm(b *testing.B, bin string, args ...string) *swarmProc {
	b.Helper()
	cmd := exec.Command(bin, append([]string{"swarm"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	p := &swarmProc{cmd: cmd, lines: make(chan line, 1024)}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.lines <- line{sc.Text(), time.Now()}
		}
	}()
	b.Cleanup(func() { p.stop() })
	return p
}

// next is the next line matching re and its submatches, or fails after limit.
func (p *swarmProc) next(b *testing.B, re *regexp.Regexp, limit time.Duration) (line, []string) {
	b.Helper()
	timeout := time.After(limit)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				b.Fatalf("swarm ended before a line matching %q", re)
			}
			if m := re.FindStringSubmatch(l.text); m != nil {
				return l, m
			}
		case <-timeout:
			b.Fatalf("no swarm line matching %q within %s", re, limit)
		}
	}
}

// stop stops the swarm (SIGTERM: it prints its summary) and returns the lines it printed since.
func (p *swarmProc) stop() string {
	if p.cmd.ProcessState != nil {
		return ""
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	var rest strings.Builder
	for l := range p.lines {
		rest.WriteString(l.text + "\n")
	}
	p.cmd.Wait()
	return rest.String()
}

// cpu is the CPU time pid has used, user and system, from /proc/PID/stat.
func cpu(b *testing.B, pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The command name, field 2, is in parentheses and may hold spaces: count from after it.
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		b.Fatalf("/proc/%d/stat: %q", pid, s)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64) // field 14
	stime, err2 := strconv.ParseInt(f[12], 10, 64) // field 15
	if err1 != nil || err2 != nil {
		b.Fatalf("/proc/%d/stat: %q", pid, s)
	}
	return time.Duration(utime+stime) * clockTick
}

// procStatus reads a "Key: value kB" field of /proc/PID/status or /proc/meminfo, in bytes.
func procStatus(b *testing.B, path, key string) int64 {
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	for l := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(l, key+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				b.Fatalf("%s %s %q", path, key, v)
			}
			return kb * 1024
		}
	}
	b.Fatalf("no %s in %s", key, path)
	return 0
}

func rss(b *testing.B, pid int) int64 {
	return procStatus(b, fmt.Sprintf("/proc/%d/status", pid), "VmRSS")
}

var (
	statusTasks  = regexp.MustCompile(`registered (\d+)/\d+ .*  tasks (\d+) \(`)
	statusFails  = regexp.MustCompile(`  failed (\d+)`)
	summaryFails = regexp.MustCompile(`\d+ failed: .*\n.*latest failure: .*`)
	summaryLat   = regexp.MustCompile(`completed in .*: p50 (\S+), p90 (\S+), p99 (\S+),`)
)

// taskRun is what one swarm measured.
type taskRun struct {
	rate       float64       // tasks completed a second
	serveCPU   time.Duration // serve's CPU per task
	swarmCPU   time.Duration // the swarm's (devices and load generator) per task
	failed     int           // in the window
	p50, p99   time.Duration // of the whole run, warm-up included
	registered int           // devices registered at the end of the window
	serveRSS   int64         // serve's resident set at the end of the window, bytes
}

// runTasks runs a swarm of taskDevices sending seed tasks with callers in flight against serve,
// and measures over window status lines after warmup.
func runTasks(b *testing.B, bin string, serve *os.Process, url, prof, prefix, route string, callers int) taskRun {
	b.Helper()
	p := startSwarm(b, bin, "-n", strconv.Itoa(taskDevices), "--server", url, "--mac-prefix", prefix, "--interval", "1s",
		"--talk", strconv.Itoa(taskRate), "--callers", strconv.Itoa(callers), "--route", route)
	// The load starts once every device has registered; tasks counted from then on.
	for range warmup + 1 {
		p.next(b, statusTasks, time.Minute)
	}
	type mark struct {
		at         time.Time
		tasks      int
		failed     int
		serve, swm time.Duration
	}
	read := func() mark {
		l, m := p.next(b, statusTasks, 10*time.Second)
		k := mark{at: l.at, serve: cpu(b, serve.Pid), swm: cpu(b, p.cmd.Process.Pid)}
		k.tasks, _ = strconv.Atoi(m[2])
		if f := statusFails.FindStringSubmatch(l.text); f != nil {
			k.failed, _ = strconv.Atoi(f[1])
		}
		return k
	}
	start := read()
	// serve's CPU profile over the window (with BENCHSERVE_PROFILE).
	profiled := make(chan struct{})
	go func() {
		defer close(profiled)
		saveProfile(b, prof, fmt.Sprintf("profile?seconds=%d", window), fmt.Sprintf("cpu-%s-%d.pprof", route, callers))
	}()
	var end mark
	for range window {
		end = read()
	}
	serveRSS := rss(b, serve.Pid)
	saveProfile(b, prof, "heap", fmt.Sprintf("heap-%s-%d.pprof", route, callers))
	<-profiled
	summary := p.stop()
	n := end.tasks - start.tasks
	if n <= 0 {
		b.Fatalf("no task completed in %s; the swarm's summary:\n%s", end.at.Sub(start.at), summary)
	}
	r := taskRun{
		rate:     float64(n) / end.at.Sub(start.at).Seconds(),
		serveCPU: (end.serve - start.serve) / time.Duration(n),
		swarmCPU: (end.swm - start.swm) / time.Duration(n),
		failed:   end.failed - start.failed,
		serveRSS: serveRSS,
	}
	if f := summaryFails.FindString(summary); f != "" {
		b.Logf("%d callers: %s", callers, f) // the kinds of failure, for whoever reads -v
	}
	if m := summaryLat.FindStringSubmatch(summary); m != nil {
		r.p50, _ = time.ParseDuration(m[1])
		r.p99, _ = time.ParseDuration(m[3])
	}
	return r
}

// Seed tasks/send through 100 swarm devices, with the load generator asking more than serve
// answers, at 8, 64 and 256 callers: the throughput, and serve's CPU per task. Then A2A 1.0
// SendMessage at 8 callers, for comparison.
func BenchmarkServeTasks(b *testing.B) {
	bin := setup(b)
	serve, url, prof := startServe(b, bin)
	for i, run := range []struct {
		name, route string
		callers     int
	}{{"callers=8", "seed", 8}, {"callers=64", "seed", 64}, {"callers=256", "seed", 256}, {"a2a-callers=8", "a2a", 8}} {
		b.Run(run.name, func(b *testing.B) {
			var r taskRun
			for b.Loop() {
				// A prefix of its own per swarm: the previous swarm's devices may not all be
				// gone from serve yet.
				r = runTasks(b, bin, serve, url, prof, fmt.Sprintf("02-D%d", i), run.route, run.callers)
			}
			b.ReportMetric(r.rate, "tasks/s")
			b.ReportMetric(float64(r.serveCPU)/1e6, "serve-cpu-ms/task")
			b.ReportMetric(float64(r.swarmCPU)/1e6, "swarm-cpu-ms/task")
			b.ReportMetric(float64(r.failed), "failed")
			b.ReportMetric(float64(r.p50)/1e6, "p50-ms")
			b.ReportMetric(float64(r.p99)/1e6, "p99-ms")
			b.ReportMetric(float64(r.serveRSS)/(1<<20), "serve-rss-MiB")
		})
	}
}

// serve's resident set idle, with 1,000 swarm devices registered and, if the machine can hold
// them, with 16,000: KiB per device over idle.
func BenchmarkServeRSSPerDevice(b *testing.B) {
	bin := setup(b)
	for b.Loop() {
		serve, url, prof := startServe(b, bin)
		time.Sleep(settle)
		idle := rss(b, serve.Pid)
		registered := func(p *swarmProc, n int, limit time.Duration) {
			p.next(b, regexp.MustCompile(fmt.Sprintf(`registered %d/%d`, n, n)), limit)
		}
		first := startSwarm(b, bin, "-n", "1000", "--server", url, "--mac-prefix", "02-DA", "--interval", "500ms")
		registered(first, 1000, 2*time.Minute)
		time.Sleep(settle)
		at1k := rss(b, serve.Pid)
		saveProfile(b, prof, "heap", "heap-devices-1k.pprof")
		saveProfile(b, prof, "goroutine", "goroutine-devices-1k.pprof")
		saveProfile(b, prof, "heap?debug=1", "memstats-devices-1k.txt") // ends with runtime.MemStats
		b.ReportMetric(float64(idle)/1024, "idle-KiB")
		b.ReportMetric(float64(at1k-idle)/1024/1000, "KiB/device-1k")

		// 15,000 more, in a second swarm, if the memory and the open files allow: about 200 KiB
		// each for both processes, and a socket each on both sides of the loopback.
		const more = 15000
		avail := procStatus(b, "/proc/meminfo", "MemAvailable")
		soft, hard, _ := swarm.OpenFileLimit()
		if need := int64(more) * 200 << 10; avail < need {
			b.Logf("16,000 devices skipped: %d MiB available, want %d MiB", avail>>20, need>>20)
			continue
		}
		if err := swarm.CheckOpenFiles(1000+more, soft, hard); err != nil {
			b.Logf("16,000 devices skipped: %v", err)
			continue
		}
		start := time.Now()
		second := startSwarm(b, bin, "-n", strconv.Itoa(more), "--server", url, "--mac-prefix", "02-DB", "--interval", "500ms")
		registered(second, more, 4*time.Minute)
		b.ReportMetric(time.Since(start).Seconds(), "register-15k-s")
		time.Sleep(settle)
		at16k := rss(b, serve.Pid)
		saveProfile(b, prof, "heap", "heap-devices-16k.pprof")
		saveProfile(b, prof, "goroutine", "goroutine-devices-16k.pprof")
		saveProfile(b, prof, "heap?debug=1", "memstats-devices-16k.txt") // ends with runtime.MemStats
		b.ReportMetric(float64(at16k-idle)/1024/(1000+more), "KiB/device-16k")
		second.stop()
		first.stop()
	}
}
