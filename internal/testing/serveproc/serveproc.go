// Package serveproc runs a built devicectl binary's `serve`, and a device's `run`, as processes of
// their own, for the tests and benchmarks that measure them from outside (serve's RSS, its CPU,
// many devices against it, a device on a real sound server).
package serveproc

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/devicectl/devicectl/internal/testing/logbuf"
)

var (
	buildOnce sync.Once
	bin       string // devicectl, built for this machine
	buildErr  error
)

// Build builds devicectl for the machine the test runs on once per test binary ($GO, else go,
// builds it), with the build tags given (the same at every call of a test binary), and returns
// its path. That is not runtime.GOARCH when the test binary is cross-compiled and run under qemu
// (make test-arm): the processes a test starts run natively, and the code in them is tested on
// ARM by the package tests. Call Remove from TestMain once the tests are done.
func Build(t testing.TB, tags ...string) string {
	t.Helper()
	buildOnce.Do(func() {
		gobin := cmp.Or(os.Getenv("GO"), "go")
		host, err := exec.Command(gobin, "env", "GOHOSTOS", "GOHOSTARCH").Output()
		if err != nil {
			buildErr = fmt.Errorf("go env: %w", err)
			return
		}
		osArch := strings.Fields(string(host))
		if len(osArch) != 2 {
			buildErr = fmt.Errorf("go env GOHOSTOS GOHOSTARCH printed %q", host)
			return
		}
		dir, err := os.MkdirTemp("", "devicectl-test")
		if err != nil {
			buildErr = err
			return
		}
		bin = filepath.Join(dir, "devicectl")
		cmd := exec.Command(gobin, "build", "-tags", strings.Join(tags, ","), "-o", bin, "github.com/devicectl/devicectl/cmd/devicectl")
		cmd.Env = append(os.Environ(), "GOOS="+osArch[0], "GOARCH="+osArch[1])
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return bin
}

// Remove deletes what Build built.
func Remove() {
	if bin != "" {
		os.RemoveAll(filepath.Dir(bin))
	}
}

// Start runs `bin serve --listen 127.0.0.1:0 --log-level error` with args after them until the
// test ends, and returns the process and the devices' ws:// URL from its banner. Its stdin stays
// open and silent (serve keeps serving until it closes); its output past the banner is discarded.
func Start(t testing.TB, bin string, args ...string) (*os.Process, string) {
	t.Helper()
	return StartLogging(t, bin, io.Discard, args...)
}

// StartLogging is Start with serve's stderr but the banner copied to log, for a test that shows
// the server's log when it fails.
func StartLogging(t testing.TB, bin string, log io.Writer, args ...string) (*os.Process, string) {
	t.Helper()
	p, url, _ := start(t, bin, log, false, args)
	return p, url
}

// StartWithOutput is Start with serve's stdout, a line "+ MAC ..." per device that registers,
// handed to the caller, who reads it until the test ends (serve waits once the pipe is full) or
// hands it to io.Copy(io.Discard, ...).
func StartWithOutput(t testing.TB, bin string, args ...string) (*os.Process, string, io.Reader) {
	t.Helper()
	return start(t, bin, io.Discard, true, args)
}

func start(t testing.TB, bin string, log io.Writer, withStdout bool, args []string) (*os.Process, string, io.Reader) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--listen", "127.0.0.1:0", "--log-level", "error"}, args...)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout io.Reader
	if withStdout {
		if stdout, err = cmd.StdoutPipe(); err != nil {
			t.Fatal(err)
		}
	} else {
		cmd.Stdout = io.Discard // a line per registration
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	errs := bufio.NewReader(stderr)
	for {
		line, err := errs.ReadString('\n')
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
		if url, ok := BannerURL(line); ok {
			go io.Copy(log, errs)
			return cmd.Process, url, stdout
		}
		io.WriteString(log, line) // log lines may come first, at --log-level info
	}
}

// BannerURL returns the devices' ws:// URL from serve's banner, the line that says where it
// listens ("devicectl serve: listening at ws://127.0.0.1:PORT/; HTTP at ..."); ok is false for
// any other line.
func BannerURL(line string) (url string, ok bool) {
	_, url, ok = strings.Cut(line, "listening at ")
	url, _, _ = strings.Cut(url, ";")
	return url, ok && strings.HasPrefix(url, "ws://")
}

// Device is a `devicectl run` process that Run started.
type Device struct {
	Out, Err logbuf.Buffer // its stdout (what it renders) and stderr (its log)
	Exited   chan struct{} // closed once it has exited
	WaitErr  error         // how it exited (nil: with status 0), set before Exited is closed
	Pid      int
	proc     *os.Process
}

// Run runs `bin run --config config` until the test ends, or Stop: then it is stopped (SIGTERM)
// and waited for, and its stderr logged if the test failed.
func Run(t testing.TB, bin, config string) *Device {
	t.Helper()
	return RunWith(t, bin, nil, "run", "--config", config)
}

// RunWith is Run with the command line args (a `run` command's, as a harness or systemd gives
// it) and env as the process's whole environment (nil: this process's).
func RunWith(t testing.TB, bin string, env []string, args ...string) *Device {
	t.Helper()
	d := &Device{Exited: make(chan struct{})}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = &d.Out, &d.Err
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d.Pid, d.proc = cmd.Process.Pid, cmd.Process
	go func() {
		d.WaitErr = cmd.Wait()
		close(d.Exited)
	}()
	t.Cleanup(func() {
		d.Stop()
		if t.Failed() {
			t.Logf("devicectl run's stderr:\n%s", d.Err.String())
		}
	})
	return d
}

// StopWait bounds how long a device may take to exit after SIGTERM: a working one takes
// milliseconds.
const StopWait = 10 * time.Second

// Stop stops the device (SIGTERM, then SIGKILL if it is still running StopWait later) and waits
// for it to exit, for a test that is done with it before its end.
func (d *Device) Stop() {
	d.proc.Signal(syscall.SIGTERM) // an error once it has exited, when there is nothing to stop
	select {
	case <-d.Exited:
	case <-time.After(StopWait):
		d.proc.Kill()
		<-d.Exited
	}
}

// Terminate stops the device as systemd does, with SIGTERM, and fails the test unless it exits
// with status 0 within StopWait.
func (d *Device) Terminate(t testing.TB) {
	t.Helper()
	if err := d.proc.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v; log:\n%s", err, d.Err.String())
	}
	select {
	case <-d.Exited:
		if d.WaitErr != nil {
			t.Errorf("after SIGTERM: %v, want exit 0; log:\n%s", d.WaitErr, d.Err.String())
		}
	case <-time.After(StopWait):
		t.Fatalf("still running %v after SIGTERM; log:\n%s", StopWait, d.Err.String())
	}
}
