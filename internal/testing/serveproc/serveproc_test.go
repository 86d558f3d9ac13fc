package serveproc

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A device Run starts registers with serve, which prints its line on the stdout StartWithOutput
// hands over; Stop ends the device before the test does.
func TestServeAndRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := Build(t)
	_, url, stdout := StartWithOutput(t, bin, "--state-dir", t.TempDir())
	const mac = "02-00-00-00-5E-01"
	config := filepath.Join(t.TempDir(), "run.yaml")
	text := "server:\n  url: " + url + "\ndevice:\n  mac: " + mac + "\n  state_dir: " + t.TempDir() + "\nhardware:\n  mode: sim\n"
	if err := os.WriteFile(config, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	d := Run(t, bin, config)
	out := bufio.NewReader(stdout)
	line, err := out.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "+ "+mac+" ") {
		t.Fatalf("serve's first line: %q, %v", line, err)
	}
	go io.Copy(io.Discard, out)
	d.Stop()
	select {
	case <-d.Exited:
	default:
		t.Fatal("Stop returned before the device exited")
	}
	if d.Pid <= 0 {
		t.Errorf("Pid = %d", d.Pid)
	}
	if d.WaitErr != nil {
		t.Errorf("after SIGTERM: %v, want exit 0", d.WaitErr)
	}
}

// Only the line that says where serve listens gives a URL, and only a ws:// one.
func TestBannerURL(t *testing.T) {
	for line, want := range map[string]string{
		"devicectl serve: listening at ws://127.0.0.1:4321/; HTTP at http://127.0.0.1:4321/ (planner rules); type help for the commands\n": "ws://127.0.0.1:4321/",
		"devicectl serve: listening at ws://[::1]:80/":                    "ws://[::1]:80/",
		"time=... level=INFO msg=\"opened the database\"":                 "",
		"devicectl serve: the web page is at http://127.0.0.1:4321/":      "",
		"devicectl serve: listening at http://127.0.0.1:4321/; HTTP at x": "",
	} {
		got, ok := BannerURL(line)
		if got != want && ok || ok != (want != "") {
			t.Errorf("BannerURL(%q) = %q, %v; want %q", line, got, ok, want)
		}
	}
}
