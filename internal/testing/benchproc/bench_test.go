package benchproc_test

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/devicectl/devicectl/internal/testing/execload"
	"github.com/devicectl/devicectl/internal/testing/leakcheck"
)

const (
	mac = "AA-BB-CC-DD-EE-FF"
	// minStarts is how many times BenchmarkProcessStart starts each side at least: the median of
	// fewer says little on a shared machine.
	minStarts = 7
	// minRSSRounds is how many rounds BenchmarkProcessRSS runs at least: the rates of two processes
	// sharing two cores with the server move by a fifth between rounds.
	minRSSRounds = 5
	// settle is how long a registered process is left alone before its idle RSS is read.
	settle = time.Second
	// loadCalls is how many executes the loaded RSS is measured over: docs/design.md's target is
	// the RSS after 100k calls.
	loadCalls = 100000
	// waitLimit bounds each wait for something that takes milliseconds when it works.
	waitLimit = 10 * time.Second
)

// TestMain removes the binaries the benchmarks built.
func TestMain(m *testing.M) {
	code := leakcheck.Main(m)
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// programs are the two sides, built once per test binary.
type programs struct {
	dir          string
	devicectl    string
	floor        string
	registration string // file holding the mcp/registerTools request devicectl sends
}

var (
	buildOnce sync.Once
	built     programs
	buildErr  error
)

// setup builds both programs for this machine, as `make cross` builds the shipped ones, and
// records devicectl's registration for the floor to send; it skips where there is no /proc.
func setup(tb testing.TB) *programs {
	tb.Helper()
	if runtime.GOOS != "linux" {
		tb.Skip("reads /proc/PID/status")
	}
	buildOnce.Do(func() { buildErr = build(&built) })
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return &built
}

func build(p *programs) error {
	dir, err := os.MkdirTemp("", "benchproc")
	if err != nil {
		return err
	}
	p.dir = dir
	goCmd := cmp.Or(os.Getenv("GO"), "go")
	// The machine's own GOOS/GOARCH, not the test binary's: under qemu (make test-armv6) the test
	// runs as ARM and the programs it starts are still the host's.
	hostEnv, err := exec.Command(goCmd, "env", "GOHOSTOS", "GOHOSTARCH").Output()
	if err != nil {
		return fmt.Errorf("go env: %w", err)
	}
	host := strings.Fields(string(hostEnv))
	if len(host) != 2 {
		return fmt.Errorf("go env GOHOSTOS GOHOSTARCH printed %q", hostEnv)
	}
	tags, err := boardTags()
	if err != nil {
		return err
	}
	for _, prog := range []struct{ out, pkg, tags string }{
		{filepath.Join(dir, "devicectl"), "github.com/devicectl/devicectl/cmd/devicectl", tags},
		{filepath.Join(dir, "floor"), "github.com/devicectl/devicectl/internal/testing/benchproc/floor", ""},
	} {
		cmd := exec.Command(goCmd, "build", "-trimpath", "-ldflags=-s -w", "-tags", prog.tags, "-o", prog.out, prog.pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+host[0], "GOARCH="+host[1])
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %w\n%s", prog.pkg, err, out)
		}
	}
	p.devicectl = filepath.Join(dir, "devicectl")
	p.floor = filepath.Join(dir, "floor")

	// The floor sends what devicectl sends: take it from a run of devicectl.
	srv := newServer()
	defer srv.close()
	proc, line, _, err := srv.start(p.side(board))
	if err != nil {
		return err
	}
	if err := proc.stop(); err != nil {
		return err
	}
	p.registration = filepath.Join(dir, "registration.json")
	return os.WriteFile(p.registration, line.registration, 0o600)
}

// boardTags returns the build tags of the board binaries (BOARD_TAGS, which make exports; else
// the Makefile's default): devicectl is measured as a device ships it, without the agent server,
// whose code would otherwise be most of its resident size (the binary's pages in memory).
func boardTags() (string, error) {
	if t := os.Getenv("BOARD_TAGS"); t != "" {
		return t, nil
	}
	mk, err := os.ReadFile("../../../Makefile")
	if err != nil {
		return "", fmt.Errorf("the board tags: BOARD_TAGS is unset and %w", err)
	}
	for l := range strings.Lines(string(mk)) {
		if v, ok := strings.CutPrefix(l, "BOARD_TAGS ?="); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", errors.New("the board tags: BOARD_TAGS is unset and the Makefile sets no default")
}

// side is one program under measurement and how to start it against a server.
type side struct {
	name string
	dir  string // for the program's state and log
	argv func(url string) []string
}

// The sides: devicectl on parts that count as real ones, whose calls take a board's path;
// devicectl on the instant parts of --hardware sim; and the floor.
const (
	board  = "devicectl"
	inline = "inline"
	floor  = "floor"
)

func (p *programs) side(name string) side {
	s := side{name: name, dir: filepath.Join(p.dir, name+"-run")}
	switch name {
	case board, inline:
		// As a service runs it, on simulated hardware, with no config file but /dev/null (a
		// developer's /etc/devicectl would otherwise be read) and a state directory of its own.
		// --sim-latency 0s: parts that count as real ones and take no time.
		s.argv = func(url string) []string {
			argv := []string{p.devicectl, "run", "--server", url, "--mac", mac, "--hardware", "sim",
				"--config", "/dev/null", "--state-dir", s.dir}
			if name == board {
				argv = append(argv, "--sim-latency", "0s")
			}
			return argv
		}
	case floor:
		s.argv = func(url string) []string {
			return []string{p.floor, "-server", url, "-register", p.registration}
		}
	default:
		panic("no side " + name)
	}
	return s
}

// sides are the named sides, in the order round i starts them: rotating, so none always runs
// right after another.
func (p *programs) sides(i int, names ...string) []side {
	s := make([]side, len(names))
	for j := range names {
		s[j] = p.side(names[(i+j)%len(names)])
	}
	return s
}

// server is a minimal agent server: it accepts one line at a time, reads its registration and
// hands the line to the benchmark, which answers it and drives the line.
type server struct {
	srv   *httptest.Server
	lines chan *line
	quit  chan struct{}
}

// line is one program's connection, as the server sees it.
type line struct {
	ws           *websocket.Conn
	registration []byte
	at           time.Time   // when the registration had been read
	frames       chan []byte // every later frame, in order; closed when the line ends
}

func newServer() *server {
	s := &server{lines: make(chan *line), quit: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
		if err != nil {
			return
		}
		defer c.CloseNow()
		c.SetReadLimit(1 << 20)
		// A long-lived context: cancelling a read tears the line down.
		_, reg, err := c.Read(context.Background())
		at := time.Now()
		if err != nil {
			return
		}
		l := &line{ws: c, registration: reg, at: at, frames: make(chan []byte, 2*execload.Window)}
		defer close(l.frames)
		select {
		case s.lines <- l:
		case <-s.quit:
			return
		}
		for {
			_, f, err := c.Read(context.Background())
			if err != nil {
				return
			}
			select {
			case l.frames <- f:
			case <-s.quit:
				return
			}
		}
	}))
	return s
}

func (s *server) url() string { return "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/" }

func (s *server) close() {
	close(s.quit)
	s.srv.Close()
}

// proc is a started program.
type proc struct {
	cmd    *exec.Cmd
	log    string // its stdout and stderr
	exited chan error
}

// start starts one side, waits for its registration and acknowledges it. It returns the time
// from just before exec to the server having read the registration.
func (s *server) start(sd side) (*proc, *line, time.Duration, error) {
	if err := os.MkdirAll(sd.dir, 0o700); err != nil {
		return nil, nil, 0, err
	}
	argv := sd.argv(s.url())
	log, err := os.Create(filepath.Join(sd.dir, "log"))
	if err != nil {
		return nil, nil, 0, err
	}
	defer log.Close() // the child has its own descriptor
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "DEVICECTL_TOKEN=")
	cmd.Stdout, cmd.Stderr = log, log
	p := &proc{cmd: cmd, log: log.Name(), exited: make(chan error, 1)}

	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, nil, 0, err
	}
	go func() { p.exited <- cmd.Wait() }()
	var l *line
	select {
	case l = <-s.lines:
	case err := <-p.exited:
		return nil, nil, 0, fmt.Errorf("%s exited before registering: %v%s", sd.name, err, p.tail())
	case <-time.After(waitLimit):
		p.kill()
		return nil, nil, 0, fmt.Errorf("%s did not register within %v%s", sd.name, waitLimit, p.tail())
	}
	startup := l.at.Sub(t0)

	var reg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.Unmarshal(l.registration, &reg); err != nil || reg.Method != "mcp/registerTools" || reg.ID == nil {
		p.kill()
		return nil, nil, 0, fmt.Errorf("%s's first frame %s is not an mcp/registerTools request", sd.name, l.registration)
	}
	ack := append(append([]byte(`{"jsonrpc":"2.0","id":`), reg.ID...), `,"result":{"status":"registered"}}`...)
	if err := l.ws.Write(context.Background(), websocket.MessageText, ack); err != nil {
		p.kill()
		return nil, nil, 0, fmt.Errorf("acknowledging %s's registration: %w", sd.name, err)
	}
	return p, l, startup, nil
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// tail is the end of the program's log, for error messages.
func (p *proc) tail() string {
	b, _ := os.ReadFile(p.log)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	if len(b) == 0 {
		return ""
	}
	return "; its output:\n" + string(b)
}

// stop ends the program as systemd does (SIGTERM) and wants exit 0.
func (p *proc) stop() error {
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case err := <-p.exited:
		if err != nil {
			return fmt.Errorf("%s after SIGTERM: %w%s", filepath.Base(p.cmd.Path), err, p.tail())
		}
		return nil
	case <-time.After(waitLimit):
		p.kill()
		return fmt.Errorf("%s still running %v after SIGTERM%s", filepath.Base(p.cmd.Path), waitLimit, p.tail())
	}
}

func (p *proc) kill() {
	p.cmd.Process.Kill()
	<-p.exited
}

// memory reads VmRSS (resident now) and VmHWM (peak resident) of a process, in bytes.
func memory(pid int) (rss, hwm int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok || (key != "VmRSS" && key != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(val), " kB"), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/%d/status: %s: %w", pid, sc.Text(), err)
		}
		if key == "VmRSS" {
			rss = kb << 10
		} else {
			hwm = kb << 10
		}
	}
	if err := sc.Err(); err != nil {
		return 0, 0, err
	}
	if rss == 0 || hwm == 0 {
		return 0, 0, fmt.Errorf("/proc/%d/status has no VmRSS or VmHWM", pid)
	}
	return rss, hwm, nil
}

// peakWatch measures a process's peak resident size from now on: exactly, from VmHWM after
// resetting it (proc(5), clear_refs "5"), or where the kernel refuses that, by sampling VmRSS.
type peakWatch struct {
	pid     int
	sampled chan int64 // the sampler's peak, when sampling
	done    chan struct{}
}

func watchPeak(pid int) *peakWatch {
	w := &peakWatch{pid: pid}
	if os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0) == nil {
		return w
	}
	w.sampled, w.done = make(chan int64, 1), make(chan struct{})
	go func() {
		var peak int64
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			if rss, _, err := memory(pid); err == nil {
				peak = max(peak, rss)
			}
			select {
			case <-t.C:
			case <-w.done:
				w.sampled <- peak
				return
			}
		}
	}()
	return w
}

// peak stops watching and returns the peak.
func (w *peakWatch) peak() (int64, error) {
	rss, hwm, err := memory(w.pid)
	if w.done == nil {
		return hwm, err
	}
	close(w.done)
	return max(<-w.sampled, rss), err
}

// pipeline keeps execload.Window executes outstanding on l, sending the next as each answer
// arrives, until n have been answered with a result; it returns how long that took.
func pipeline(l *line, n int) (time.Duration, error) {
	ctx := context.Background()
	silence := time.NewTimer(waitLimit)
	defer silence.Stop()
	return execload.Pipeline(n, execload.Frame, func(f []byte) error {
		return l.ws.Write(ctx, websocket.MessageText, f)
	}, func() ([]byte, error) {
		// The reading gives up when the line ends or goes silent, so a failed send ends it too.
		silence.Reset(waitLimit)
		select {
		case f, ok := <-l.frames:
			if ok {
				return f, nil
			}
		case <-silence.C:
		}
		return nil, errors.New("the line ended, or went silent, before every call was answered")
	})
}

// median of xs, which it sorts.
func median[T int64 | time.Duration | float64](xs []T) T {
	slices.Sort(xs)
	if len(xs) == 0 {
		return 0
	}
	return xs[len(xs)/2]
}

// samples are one figure's measurements, per side.
type samples map[string][]float64

// report reports the median of each side as unit, prefixed by the side's name but for devicectl's
// (floor-unit, inline-unit), and each devicectl side's over the floor's as ratioUnit
// (inline-ratioUnit).
func (s samples) report(b *testing.B, unit, ratioUnit string) {
	f := median(s[floor])
	b.ReportMetric(f, floor+"-"+unit)
	for _, name := range []string{board, inline} {
		xs, ok := s[name]
		if !ok {
			continue
		}
		prefix := ""
		if name != board {
			prefix = name + "-"
		}
		d := median(xs)
		b.ReportMetric(d, prefix+unit)
		if f > 0 {
			b.ReportMetric(d/f, prefix+ratioUnit)
		}
	}
}

const mb = 1e6 // RSS is reported in MB of 10^6 bytes: the stricter reading of "14 MB"

// BenchmarkProcessStart: from exec to the server reading mcp/registerTools, median of at least
// minStarts starts of each (target: <= 50 ms on amd64). Each start is acknowledged and stopped.
// Reports start-ms, floor-start-ms, start-x-floor; ns/op is devicectl's median start.
func BenchmarkProcessStart(b *testing.B) {
	progs := setup(b)
	srv := newServer()
	defer srv.close()
	once := func(sd side) time.Duration {
		p, _, d, err := srv.start(sd)
		if err != nil {
			b.Fatal(err)
		}
		if err := p.stop(); err != nil {
			b.Fatal(err)
		}
		return d
	}
	for _, sd := range progs.sides(0, board, floor) {
		once(sd) // a first start pages the binary in, as a boot's first start does not repeat
	}
	starts := max(b.N, minStarts)
	times := samples{}
	b.ResetTimer()
	for i := range starts {
		for _, sd := range progs.sides(i, board, floor) {
			times[sd.name] = append(times[sd.name], float64(once(sd))/float64(time.Millisecond))
		}
	}
	b.StopTimer()
	times.report(b, "start-ms", "start-x-floor")
	b.ReportMetric(median(times[board])*float64(time.Millisecond), "ns/op")
	b.ReportMetric(float64(starts), "starts")
}

// BenchmarkProcessRSS: resident memory once registered and settled, and at its peak while the
// server keeps loadCalls executes pipelined (target: <= 14 MB and <= 1.15x the floor's, at Go's
// default GOGC), with the rate they are answered at; median of at least minRSSRounds rounds, each
// side with the same environment. Reports idle-MB, loaded-MB and execs/s, each with its floor-
// twin, and idle-x-floor, loaded-x-floor and rate-x-floor (devicectl's rate over the floor's: the
// pipelined target is rate-x-floor >= 0.85), for devicectl on parts that count as real ones (a
// board's path), and the same with the prefix inline- for the instant parts of --hardware sim.
func BenchmarkProcessRSS(b *testing.B) {
	progs := setup(b)
	srv := newServer()
	defer srv.close()
	idle, loaded, rate := samples{}, samples{}, samples{}
	rounds := max(b.N, minRSSRounds)
	b.ResetTimer()
	for i := range rounds {
		for _, sd := range progs.sides(i, board, inline, floor) {
			p, l, _, err := srv.start(sd)
			if err != nil {
				b.Fatal(err)
			}
			time.Sleep(settle)
			rss, _, err := memory(p.pid())
			if err != nil {
				b.Fatal(err)
			}
			w := watchPeak(p.pid())
			took, err := pipeline(l, loadCalls)
			if err != nil {
				b.Fatalf("%s: %v%s", sd.name, err, p.tail())
			}
			peak, err := w.peak()
			if err != nil {
				b.Fatal(err)
			}
			if err := p.stop(); err != nil {
				b.Fatal(err)
			}
			idle[sd.name] = append(idle[sd.name], float64(rss)/mb)
			loaded[sd.name] = append(loaded[sd.name], float64(peak)/mb)
			rate[sd.name] = append(rate[sd.name], loadCalls/took.Seconds())
		}
	}
	b.StopTimer()
	idle.report(b, "idle-MB", "idle-x-floor")
	loaded.report(b, "loaded-MB", "loaded-x-floor")
	rate.report(b, "execs/s", "rate-x-floor")
	b.ReportMetric(float64(rounds), "rounds")
}

// Every side, built as the benchmarks build it, registers, answers pipelined executes with
// results, shows in /proc, and stops on SIGTERM with exit 0; the floor registers with devicectl's
// very request. Benchmarks are not run by `go test`: this keeps them from rotting.
func TestProgramsServe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds devicectl")
	}
	progs := setup(t)
	srv := newServer()
	defer srv.close()
	want, err := os.ReadFile(progs.registration)
	if err != nil {
		t.Fatal(err)
	}
	for _, sd := range progs.sides(0, board, inline, floor) {
		p, l, startup, err := srv.start(sd)
		if err != nil {
			t.Fatal(err)
		}
		if startup <= 0 {
			t.Errorf("%s: start took %v", sd.name, startup)
		}
		if !bytes.Equal(l.registration, want) {
			t.Errorf("%s registered with %s, want %s", sd.name, l.registration, want)
		}
		w := watchPeak(p.pid())
		if _, err := pipeline(l, 3*execload.Window); err != nil {
			t.Errorf("%s: %v%s", sd.name, err, p.tail())
		}
		rss, _, err := memory(p.pid())
		if err != nil || rss <= 0 {
			t.Errorf("%s: RSS %d, %v", sd.name, rss, err)
		}
		if peak, err := w.peak(); err != nil || peak < rss {
			t.Errorf("%s: peak %d, %v; want at least the RSS %d", sd.name, peak, err, rss)
		}
		if err := p.stop(); err != nil {
			t.Error(err)
		}
	}
}
