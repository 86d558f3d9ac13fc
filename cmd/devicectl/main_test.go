package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/devicectl/devicectl/internal/buildfeatures"
	"github.com/devicectl/devicectl/internal/testing/leakcheck"
	"github.com/devicectl/devicectl/internal/testing/logbuf"
	"github.com/devicectl/devicectl/internal/testing/serveproc"
	"github.com/devicectl/devicectl/internal/testing/standin"
)

// TestMain fails the package if a test leaves goroutines behind: every goroutine a command starts
// must be gone once it has returned.
func TestMain(m *testing.M) {
	code := leakcheck.Main(m)
	serveproc.Remove()
	os.Exit(code)
}

// result is what one in-process run of devicectl gave.
type result struct {
	code           int
	stdout, stderr string
}

// runCLI runs devicectl with args and stdin in this process.
func runCLI(ctx context.Context, stdin string, args ...string) result {
	var out, errw bytes.Buffer
	code := execute(ctx, args, strings.NewReader(stdin), &out, &errw)
	return result{code: code, stdout: out.String(), stderr: errw.String()}
}

// running is `devicectl run` in this process, as startRun started it.
type running struct {
	stdout, stderr logbuf.Buffer // what it renders, and its log
	exited         chan struct{} // closed once it has returned
	code           int           // set before exited is closed
	cancel         context.CancelFunc
}

// startRun runs `devicectl run` with args in this process, with no input, until the test ends or
// stop.
func startRun(t *testing.T, args ...string) *running {
	ctx, cancel := context.WithCancel(t.Context())
	d := &running{exited: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(d.exited)
		d.code = execute(ctx, append([]string{"run"}, args...), strings.NewReader(""), &d.stdout, &d.stderr)
	}()
	t.Cleanup(func() { d.stop() })
	return d
}

// stop ends run as SIGINT or SIGTERM does (main cancels the context) and returns what it gave.
func (d *running) stop() result {
	d.cancel()
	<-d.exited
	return d.result()
}

// result is what run gave; it is whole once exited is closed.
func (d *running) result() result {
	return result{code: d.code, stdout: d.stdout.String(), stderr: d.stderr.String()}
}

func TestExitCodes(t *testing.T) {
	cases := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"help", []string{"--help"}, exitOK, ""},
		{"no command", nil, exitOK, ""},
		{"unknown command", []string{"rnu"}, exitUsage, `devicectl: unknown command "rnu" for "devicectl"; did you mean "run"?`},
		{"unknown flag", []string{"run", "--pingg", "1s"}, exitUsage, "unknown flag: --pingg"},
		{"bad flag value", []string{"run", "--ping-interval", "1"}, exitUsage, `invalid argument "1" for "--ping-interval" flag: "1" is not a duration`},
		{"token is not a flag", []string{"run", "--token", "x"}, exitUsage, "unknown flag: --token"},
		{"no server", []string{"run", "--config", "/dev/null", "--mac", "AA-BB-CC-DD-EE-FF"}, exitUsage, "devicectl: server.url: not set"},
		{"missing config", []string{"run", "--config", "/nonexistent/devicectl.yaml"}, exitUsage, "devicectl: --config: open /nonexistent/devicectl.yaml"},
		{"run with an argument", []string{"run", "now"}, exitUsage, "takes no arguments"},
		{"version with an argument", []string{"version", "x"}, exitUsage, "takes no arguments"},
		{"completion", []string{"completion", "bash"}, exitOK, ""},
		{"call without tool", []string{"call"}, exitUsage, "usage: devicectl call TOOL [JSON]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t.Context(), "", tc.args...)
			if r.code != tc.wantCode {
				t.Errorf("exit %d, want %d; stderr: %s", r.code, tc.wantCode, r.stderr)
			}
			if !strings.Contains(r.stderr, tc.wantStderr) {
				t.Errorf("stderr %q lacks %q", r.stderr, tc.wantStderr)
			}
			if tc.wantCode == exitOK && r.stderr != "" {
				t.Errorf("stderr on success: %q", r.stderr)
			}
		})
	}
}

func TestBadConfigFileExits2(t *testing.T) {
	path := standin.WriteFile(t, "devicectl.yaml", "server:\n  url: ws://x/\nconnection:\n  ping_intervall: 1s\n")
	r := runCLI(t.Context(), "", "run", "--config", path)
	want := "devicectl: " + path + ": connection.ping_intervall: unknown key (line 4)\n"
	if r.code != exitUsage || r.stderr != want {
		t.Errorf("exit %d, stderr %q; want exit 2, %q", r.code, r.stderr, want)
	}
}

func TestVersion(t *testing.T) {
	r := runCLI(t.Context(), "", "version")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	v, c := buildStamp()
	for _, want := range []string{"devicectl " + v + "\n", "commit:   " + c + "\n", runtime.Version(), runtime.GOOS + "/" + runtime.GOARCH} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("version output %q lacks %q", r.stdout, want)
		}
	}
	// The features left out, by name; none in a build with everything (go test's default).
	for _, f := range buildfeatures.Features {
		if listed := strings.Contains(r.stdout, "omitted:") && strings.Contains(r.stdout, " "+f.Name); listed == f.Has {
			t.Errorf("version output %q: %s listed as omitted %v, but the build has it %v", r.stdout, f.Name, listed, f.Has)
		}
	}
}

// A command whose feature a build leaves out keeps its name, says so whatever its arguments, and
// exits 2. The stand-in is tested here in every build; make test runs the package again with the
// board's tags, where the real commands are the stand-ins.
func TestOmittedCommand(t *testing.T) {
	root := newRootCmd()
	root.AddCommand(omittedCmd("gone", "swarm"))
	var stdout, stderr bytes.Buffer
	root.SetArgs([]string{"gone", "-n", "3", "--server", "ws://h/"})
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	err := root.ExecuteContext(t.Context())
	if !isUsage(err) || !strings.Contains(err.Error(), "devicectl gone is left out of this build (the devicectl_omit_swarm build tag") ||
		!strings.Contains(err.Error(), "make build includes it") {
		t.Errorf("err %v (usage %v), want a usage error naming the tag and make build", err, isUsage(err))
	}
	for _, f := range buildfeatures.Features {
		if f.Command == "" || f.Has {
			continue
		}
		for _, args := range [][]string{{f.Command}, {f.Command, "--listen", "x", "arg"}} {
			r := runCLI(t.Context(), "", args...)
			if r.code != exitUsage || !strings.Contains(r.stderr, "devicectl "+f.Command+" is left out of this build (the "+f.Tag+" build tag") {
				t.Errorf("%q: exit %d, stderr %q; want exit 2 and what leaves it out", args, r.code, r.stderr)
			}
		}
	}
}

// lineWaiter reads lines from r and hands them out on demand, for tests that follow a running
// command's output.
type lineWaiter struct {
	lines chan string
}

func newLineWaiter(r io.Reader) *lineWaiter {
	w := &lineWaiter{lines: make(chan string, 1024)}
	go func() {
		defer close(w.lines)
		buf := make([]byte, 0, 4096)
		tmp := make([]byte, 4096)
		for {
			n, err := r.Read(tmp)
			buf = append(buf, tmp[:n]...)
			for {
				i := bytes.IndexByte(buf, '\n')
				if i < 0 {
					break
				}
				w.lines <- string(buf[:i])
				buf = buf[i+1:]
			}
			if err != nil {
				return
			}
		}
	}()
	return w
}

// waitFor returns the first line containing want, failing the test after a generous timeout.
func (w *lineWaiter) waitFor(t *testing.T, want string) string {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case line, ok := <-w.lines:
			if !ok {
				t.Fatalf("output ended before a line with %q", want)
			}
			if strings.Contains(line, want) {
				return line
			}
		case <-timeout:
			t.Fatalf("no line with %q within 10s", want)
		}
	}
}
