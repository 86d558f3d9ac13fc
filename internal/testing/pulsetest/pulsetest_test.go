package pulsetest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// recorder is a testing.TB that notes how the test would have ended.
type recorder struct {
	testing.TB
	how, msg string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.how, r.msg = "fail", fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (r *recorder) Skipf(format string, args ...any) {
	r.how, r.msg = "skip", fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func ending(t *testing.T, f func(tb testing.TB)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r
}

func TestNeedMissingProgram(t *testing.T) {
	for _, tt := range []struct{ env, how string }{{"1", "fail"}, {"", "skip"}, {"0", "skip"}} {
		t.Setenv(RequireEnv, tt.env)
		r := ending(t, func(tb testing.TB) { Need(tb, "devicectl-no-such-program", "no-such-package") })
		if r.how != tt.how {
			t.Errorf("%s=%q: a missing program made the test %q, want %q", RequireEnv, tt.env, r.how, tt.how)
		}
		if !strings.Contains(r.msg, "devicectl-no-such-program") || !strings.Contains(r.msg, "apt-get install no-such-package") {
			t.Errorf("message %q does not name the program and its package", r.msg)
		}
	}
}

func TestNeedPresentProgram(t *testing.T) {
	t.Setenv(RequireEnv, "1")
	r := ending(t, func(tb testing.TB) {
		if p := Need(tb, "sh", "dash"); p == "" {
			tb.Fatalf("empty path")
		}
	})
	if r.how != "" {
		t.Errorf("Need(sh) ended the test: %s %s", r.how, r.msg)
	}
}

func TestStart(t *testing.T) {
	s := Start(t)
	if os.Getenv("PULSE_SERVER") != s.Address {
		t.Errorf("PULSE_SERVER = %q, want %q", os.Getenv("PULSE_SERVER"), s.Address)
	}
	c, err := net.Dial("unix", strings.TrimPrefix(s.Address, "unix:"))
	if err != nil {
		t.Fatalf("dialling the daemon: %v\n%s", err, s.Log())
	}
	c.Close()
	// Stopping early must leave the cleanup with nothing to do.
	s.stop()
	select {
	case <-s.done:
	default:
		t.Error("the daemon still runs after stop")
	}
}

func TestExtraSinks(t *testing.T) {
	Need(t, "pactl", "pulseaudio-utils")
	Start(t, "mic")
	out, err := exec.Command("pactl", "list", "short", "sinks").CombinedOutput()
	if err != nil {
		t.Fatalf("pactl: %v\n%s", err, out)
	}
	for _, sink := range []string{Sink, "mic"} {
		if !strings.Contains(string(out), sink) {
			t.Errorf("sink %q missing:\n%s", sink, out)
		}
	}
	def, err := exec.Command("pactl", "get-default-sink").CombinedOutput()
	if err != nil || strings.TrimSpace(string(def)) != Sink {
		t.Errorf("default sink %q, %v; want %s", def, err, Sink)
	}
	src, _ := exec.Command("pactl", "list", "short", "sources").CombinedOutput()
	if !strings.Contains(string(src), "mic.monitor") {
		t.Errorf("no mic.monitor source:\n%s", src)
	}
}

func TestRunReturnsOutputOrFails(t *testing.T) {
	if got := Run(t, "sh", "-c", "echo Mute: no"); got != "Mute: no\n" {
		t.Errorf("Run printed %q", got)
	}
	r := ending(t, func(tb testing.TB) { Run(tb, "sh", "-c", "echo 'No such entity' >&2; exit 1") })
	if r.how != "fail" || !strings.Contains(r.msg, "exit status 1") || !strings.Contains(r.msg, "No such entity") {
		t.Errorf("a failing program ended the test %q with %q, want a failure with its status and complaint", r.how, r.msg)
	}
}
