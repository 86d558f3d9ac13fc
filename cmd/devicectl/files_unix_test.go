//go:build unix

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/testing/serveproc"
	"github.com/devicectl/devicectl/internal/testing/standin"
)

// A config or token file that cannot be what it claims (a FIFO, /dev/zero, a directory, bytes no
// header may carry) stops `devicectl run` at start with exit 2 and a message naming the file and
// the problem, at once: no wait on a FIFO, no read of /dev/zero, no loop of doomed connects.
func TestRunRefusesBadFiles(t *testing.T) {
	t.Setenv(config.TokenEnv, "")
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // should a read still be waiting, a writer lets it go
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
	zero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	nul := standin.WriteFile(t, "nul-token", "s3c\x00ret\n")
	config := func(token string) string {
		doc := "server:\n  url: ws://127.0.0.1:1/\n  token_file: " + token + "\ndevice:\n  mac: AA-BB-CC-DD-EE-FF\n  state_dir: " + t.TempDir() + "\nhardware:\n  mode: sim\n"
		p := standin.WriteFile(t, "devicectl.yaml", doc)
		return p
	}
	for _, tc := range []struct {
		name, config, want string
	}{
		{"config is a FIFO", fifo, "devicectl: --config: " + fifo + " is a named pipe (FIFO), not a regular file\n"},
		{"config is /dev/zero", zero, "devicectl: --config: " + zero + " (a symlink to /dev/zero) is a character device, not a regular file\n"},
		{"token is /dev/zero", config(zero), "devicectl: server.token_file: " + zero + " (a symlink to /dev/zero) is a character device, not a regular file\n"},
		{"token is a FIFO", config(fifo), "devicectl: server.token_file: " + fifo + " is a named pipe (FIFO), not a regular file\n"},
		{"token is a directory", config(dir), "devicectl: server.token_file: " + dir + " is a directory, not a regular file\n"},
		{"token holds a NUL", config(nul), "devicectl: server.token_file: " + nul + " line 1: byte 4 is 0x00, which no HTTP header may carry\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			start := time.Now()
			r := runCLI(ctx, "", "run", "--config", tc.config)
			if r.code != exitUsage || r.stderr != tc.want {
				t.Errorf("exit %d, stderr %q; want exit 2, %q", r.code, r.stderr, tc.want)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %v", took)
			}
			if strings.Contains(r.stderr, "s3c") {
				t.Errorf("the token is in the message: %q", r.stderr)
			}
		})
	}
}

// The case with the real binary: the config file replaced by a FIFO, then SIGHUP, then
// SIGTERM. The reload is refused at once (it used to wait for a writer for ever, and SIGTERM then
// went unheard), and the process exits 0.
func TestRunSIGHUPWithFIFOConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := serveproc.Build(t)
	srv := standin.Start(t, nil)
	configPath := standin.WriteFile(t, "devicectl.yaml", standin.BaseConfig(t, srv.URL()))
	p := serveproc.RunWith(t, bin, append(os.Environ(), config.TokenEnv+"="), "run", "--config", configPath)
	standin.NextRegistration(t, srv)

	if err := os.Remove(configPath); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(configPath, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(p.Pid, syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	refused := "reload refused"
	p.Err.WaitFor(t, refused+" after SIGHUP", func(s string) bool { return strings.Contains(s, refused) })
	if want := configPath + " is a named pipe (FIFO), not a regular file"; !strings.Contains(p.Err.String(), want) {
		t.Errorf("the refusal does not say %q:\n%s", want, p.Err.String())
	}
	p.Terminate(t)
}
