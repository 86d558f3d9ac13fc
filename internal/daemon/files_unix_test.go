//go:build unix

package daemon

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/devicectl/devicectl/internal/testing/sdnotify"
	"github.com/devicectl/devicectl/internal/testing/standin"
)

// A SIGHUP while the config file is a FIFO is refused at once (it used to wait for a writer for
// ever): systemd hears READY=1 again, the old configuration keeps serving, and the daemon still
// stops when told to.
func TestReloadFIFOConfig(t *testing.T) {
	msgs := sdnotify.Listen(t, "0")
	srv := standin.Start(t, nil)
	d := startDaemon(t, standin.BaseConfig(t, srv.URL()), nil)
	standin.NextRegistration(t, srv)
	sdnotify.Await(t, msgs, "READY=1", func(m string) bool { return strings.HasPrefix(m, "READY=1\n") })

	if err := os.Remove(d.path); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(d.path, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // should a read still be waiting, a writer lets it go
		if w, err := os.OpenFile(d.path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
	d.d.Reload()
	select {
	case err := <-d.reloaded:
		if want := d.path + " is a named pipe (FIFO), not a regular file"; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("reload error %v, want one saying %q", err, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("the reload of a FIFO config did not end within 5s:\n%s", d.stderr.String())
	}
	sdnotify.Await(t, msgs, "RELOADING=1", func(m string) bool { return strings.HasPrefix(m, "RELOADING=1\n") })
	sdnotify.Await(t, msgs, "READY=1 after the refused reload", func(m string) bool { return m == "READY=1" })

	// The old configuration still serves: a tool call is answered.
	dev := srv.Devices()
	if len(dev) != 1 {
		t.Fatalf("%d devices registered, want 1", len(dev))
	}
	res, err := dev[0].Execute(standin.WaitCtx(t), "get_device_status", json.RawMessage(`{}`))
	if err != nil || res.Error != nil {
		t.Errorf("a call after the refused reload: %+v, %v", res, err)
	}
	start := time.Now()
	d.stop(t)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("stopping took %v", took)
	}
}

// A reload whose token file has become /dev/zero is refused naming the file and what it is, and
// the old token stays in use.
func TestReloadTokenDevZero(t *testing.T) {
	srv := standin.Start(t, nil)
	dir := t.TempDir()
	tokenFile := standin.WriteFile(t, "token", "good-token-1234\n")
	cfg := strings.Replace(standin.BaseConfig(t, srv.URL()), "server:\n", "server:\n  token_file: "+tokenFile+"\n", 1)
	d := startDaemon(t, cfg, nil)
	if got := standin.NextRegistration(t, srv).Header.Get("Authorization"); got != "Bearer good-token-1234" {
		t.Fatalf("Authorization %q", got)
	}
	zero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	d.reload(t, strings.Replace(cfg, tokenFile, zero, 1), "reload refused")
	want := "server.token_file: " + zero + " (a symlink to /dev/zero) is a character device, not a regular file"
	if log := d.stderr.String(); !strings.Contains(log, want) {
		t.Errorf("no %q in the log:\n%s", want, log)
	}
	dev := srv.Devices()
	if len(dev) != 1 || dev[0].Header.Get("Authorization") != "Bearer good-token-1234" {
		t.Errorf("after the refused reload: %d devices, want the one with the old token", len(dev))
	}
}

// opentool.api_keys_file is held to the token file's rule: readable by group or others, it is
// used with a warning naming the key, the file and the mode; mode 0600 gets none.
func TestAPIKeysFileMode(t *testing.T) {
	for _, mode := range []os.FileMode{0o644, 0o600} {
		t.Run(mode.String(), func(t *testing.T) {
			srv := standin.Start(t, nil)
			keys := filepath.Join(t.TempDir(), "keys")
			if err := os.WriteFile(keys, []byte("key-one\n"), mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(keys, mode); err != nil { // whatever the umask
				t.Fatal(err)
			}
			d := startDaemon(t, standin.BaseConfig(t, srv.URL())+"opentool:\n  listen: 127.0.0.1:0\n  api_keys_file: "+keys+"\n", nil)
			standin.NextRegistration(t, srv)
			d.stop(t)
			warning := `level=WARN msg="secret file is readable by group or others; chmod 600 it" key=opentool.api_keys_file file=` + keys + " mode=" + mode.String()
			if got, want := strings.Contains(d.stderr.String(), warning), mode&0o044 != 0; got != want {
				t.Errorf("warning %q logged: %v, want %v; log:\n%s", warning, got, want, d.stderr.String())
			}
		})
	}
}
