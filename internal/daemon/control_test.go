package daemon

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/internal/control"
	"github.com/devicectl/devicectl/internal/testing/sockdir"
	"github.com/devicectl/devicectl/internal/testing/standin"
)

// Under systemd (RUNTIME_DIRECTORY set) the daemon serves tool calls on control.sock there:
// they run on its hardware, as the server's calls do, and the socket goes when it stops.
func TestControlSocket(t *testing.T) {
	srv := standin.Start(t, nil)
	dir := sockdir.New(t)
	getenv := func(k string) string {
		if k == "RUNTIME_DIRECTORY" {
			return dir
		}
		return ""
	}
	d := startDaemon(t, standin.BaseConfig(t, srv.URL()), getenv)
	dev := standin.NextRegistration(t, srv)
	path := filepath.Join(dir, "control.sock")
	if fi, err := os.Lstat(path); err != nil || fi.Mode().Perm() != 0o660 || fi.Mode().Type() != fs.ModeSocket {
		t.Fatalf("control socket %s: %v, %v; want a socket with mode 0660", path, fi, err)
	}

	resp, err := control.Call(standin.WaitCtx(t), path, &control.Request{Tool: "amplify_volume", Input: json.RawMessage(`{"level":50}`)})
	if err != nil || resp.Error != nil || !strings.Contains(string(resp.Result), `"level":50`) {
		t.Fatalf("amplify_volume on the socket: %+v, %v", resp, err)
	}
	// The server sees the volume the socket's call set: it ran on the daemon's own speaker.
	st, err := dev.Execute(standin.WaitCtx(t), "get_device_status", json.RawMessage(`{}`))
	if err != nil || st.Error != nil || !strings.Contains(string(*st.Result), `"volume":50`) {
		t.Errorf("get_device_status from the server: %+v, %v; want volume 50", st, err)
	}
	// Bad input is answered as the server's call would be.
	resp, err = control.Call(standin.WaitCtx(t), path, &control.Request{Tool: "amplify_volume", Input: json.RawMessage(`{"level":150}`)})
	if err != nil || resp.Error == nil || resp.Error.Code != -32602 || resp.Error.Data == nil || !strings.Contains(resp.Error.Data.Details, "tool_input.level") {
		t.Errorf("amplify_volume 150 on the socket: %+v, %v; want -32602 naming tool_input.level", resp, err)
	}
	d.stderr.WaitCount(t, regexp.MustCompile(`msg="tool call on the control socket" component=control tool=amplify_volume`), 2)

	d.stop(t)
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after the stop the socket is still there (%v)", err)
	}
}

// A socket path the daemon cannot use stops it at start, naming control.socket; off opens none.
func TestControlSocketConfig(t *testing.T) {
	srv := standin.Start(t, nil)
	dir := sockdir.New(t)
	taken := filepath.Join(dir, "taken")
	os.WriteFile(taken, []byte("not a socket"), 0o600)
	c := standin.BaseConfig(t, srv.URL()) + "control:\n  socket: " + taken + "\n"
	d := startDaemon(t, c, nil)
	select {
	case err := <-d.done:
		d.cancel = nil
		if err == nil || !strings.Contains(err.Error(), "control.socket: "+taken+" exists and is not a socket") {
			t.Errorf("Run = %v; want an error naming control.socket and the file", err)
		}
	case <-standin.WaitCtx(t).Done():
		t.Fatal("the daemon started on a control socket path that is a regular file")
	}

	getenv := func(k string) string {
		if k == "RUNTIME_DIRECTORY" {
			return dir
		}
		return ""
	}
	d = startDaemon(t, standin.BaseConfig(t, srv.URL())+"control:\n  socket: off\n", getenv)
	standin.NextRegistration(t, srv)
	if _, err := os.Lstat(filepath.Join(dir, "control.sock")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("control.socket off, and yet a socket (%v)", err)
	}
	d.stop(t)
}

// Started by hand (no RUNTIME_DIRECTORY), the daemon still serves its control socket, in its
// state directory, where `devicectl call` looks: a call there drives the daemon's own parts.
func TestControlSocketByHand(t *testing.T) {
	srv := standin.Start(t, nil)
	state := sockdir.New(t) // the control socket goes here
	c := strings.Replace(standin.BaseConfig(t, srv.URL()), "state_dir: ", "state_dir: "+state+" #", 1)
	d := startDaemon(t, c, nil)
	dev := standin.NextRegistration(t, srv)
	path := filepath.Join(state, "control.sock")
	resp, err := control.Call(standin.WaitCtx(t), path, &control.Request{Tool: "amplify_volume", Input: json.RawMessage(`{"level":63}`)})
	if err != nil || resp.Error != nil {
		t.Fatalf("amplify_volume on %s: %+v, %v", path, resp, err)
	}
	st, err := dev.Execute(standin.WaitCtx(t), "get_device_status", json.RawMessage(`{}`))
	if err != nil || st.Error != nil || !strings.Contains(string(*st.Result), `"volume":63`) {
		t.Errorf("get_device_status from the server: %+v, %v; want volume 63", st, err)
	}
	d.stop(t)
}
