package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/internal/testing/pulsetest"
	"github.com/devicectl/devicectl/internal/testing/serveproc"
	"github.com/devicectl/devicectl/internal/testing/sockdir"
	"github.com/devicectl/devicectl/internal/testing/standin"
)

// controlConfig is baseConfig with the control socket at sock and the hardware section hw.
func controlConfig(t *testing.T, url, sock, hw string) string {
	t.Helper()
	c := standin.BaseConfig(t, url) + "control:\n  socket: " + sock + "\n"
	if hw != "" {
		c = strings.Replace(c, "hardware:\n  mode: sim\n", hw, 1)
	}
	path := standin.WriteFile(t, "devicectl.yaml", c)
	return path
}

// status runs `devicectl call get_device_status` and returns what it printed.
func status(t *testing.T, config string) (volume int, connection string) {
	t.Helper()
	r := runCLI(t.Context(), "", "call", "--config", config, "get_device_status")
	var st struct {
		Volume     int
		Connection string
	}
	if r.code != exitOK || json.Unmarshal([]byte(r.stdout), &st) != nil {
		t.Fatalf("get_device_status: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	return st.Volume, st.Connection
}

// While the daemon runs, call goes through its control socket and changes the daemon's parts
// (the server sees it); with no daemon it opens the parts itself. A socket a killed daemon left
// behind is replaced, and the daemon removes its own when it stops.
func TestCallThroughDaemon(t *testing.T) {
	srv := standin.Start(t, nil)
	sock := filepath.Join(sockdir.New(t), "control.sock")
	stale, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	stale.SetUnlinkOnClose(false)
	stale.Close() // as a killed daemon leaves it
	config := controlConfig(t, srv.URL(), sock, "")

	d := startRun(t, "--config", config)
	dev := standin.NextRegistration(t, srv)
	if fi, err := os.Lstat(sock); err != nil || fi.Mode().Type() != fs.ModeSocket || fi.Mode().Perm() != 0o660 {
		t.Fatalf("control socket: %v, %v; want a socket with mode 0660", fi, err)
	}

	r := runCLI(t.Context(), "", "call", "--config", config, "amplify_volume", `{"level":37}`)
	if r.code != exitOK || !strings.Contains(r.stdout, `"level": 37`) {
		t.Fatalf("call amplify_volume: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	// The daemon's speaker: the server reads back what call set.
	resp, err := dev.Execute(standin.WaitCtx(t), "get_device_status", json.RawMessage(`{}`))
	if err != nil || resp.Error != nil || !strings.Contains(string(*resp.Result), `"volume":37`) {
		t.Errorf("get_device_status from the server: %+v, %v; want volume 37", resp, err)
	}
	if v, conn := status(t, config); v != 37 || conn != "registered" {
		t.Errorf("call get_device_status: volume %d, connection %q; want 37, registered (the daemon's)", v, conn)
	}
	d.stderr.WaitUntil(t, "the daemon's log of the control call", d.exited, func(s string) bool {
		return strings.Contains(s, `msg="tool call on the control socket" component=control tool=amplify_volume`)
	})

	// Bad input: the device's -32602, printed, and exit 1.
	r = runCLI(t.Context(), "", "call", "--config", config, "amplify_volume", `{"level":150}`)
	var e map[string]any
	if r.code != exitError || json.Unmarshal([]byte(r.stdout), &e) != nil {
		t.Fatalf("call with level 150: exit %d, want %d\nstdout: %s\nstderr: %s", r.code, exitError, r.stdout, r.stderr)
	}
	wantRPCError(-32602, "tool_input.level")(t, e)
	if !strings.Contains(d.stderr.String(), "code=-32602") {
		t.Errorf("the daemon's log has no control call answered -32602:\n%s", d.stderr.String())
	}

	if r := d.stop(); r.code != exitOK {
		t.Errorf("run exited %d:\n%s", r.code, r.stderr)
	}
	if _, err := os.Lstat(sock); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after run stopped the socket is still there (%v)", err)
	}
	// No daemon: call's own simulated parts, which never heard of 37.
	if v, conn := status(t, config); v == 37 || conn != "no daemon (devicectl call)" {
		t.Errorf("call get_device_status without a daemon: volume %d, connection %q; want its own parts", v, conn)
	}
}

// A socket the user may not open is not a missing daemon: call says how to get in rather than
// opening the parts a second time. As root, which may open any socket, the check runs the binary
// as nobody, whom the socket's mode 0660 keeps out.
func TestCallSocketRefused(t *testing.T) {
	srv := standin.Start(t, nil)
	dir := sockdir.New(t)
	sock := filepath.Join(dir, "control.sock")
	config := controlConfig(t, srv.URL(), sock, "")
	startRun(t, "--config", config)
	standin.NextRegistration(t, srv)

	var code int
	var stderr string
	if os.Geteuid() == 0 {
		bin := serveproc.Build(t)
		// nobody may reach the binary, the config and the socket's directory, not the socket.
		shared := filepath.Join(dir, "devicectl.yaml")
		b, err := os.ReadFile(config)
		if err != nil {
			t.Fatal(err)
		}
		for _, step := range []error{os.WriteFile(shared, b, 0o644), os.Chmod(shared, 0o644), os.Chmod(dir, 0o755),
			os.Chmod(filepath.Dir(bin), 0o755), os.Chmod(filepath.Dir(filepath.Dir(bin)), 0o755)} {
			if step != nil {
				t.Fatal(step)
			}
		}
		cmd := exec.CommandContext(standin.WaitCtx(t), "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
			bin, "call", "--config", shared, "get_device_status")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("setpriv %s call: %v\n%s", bin, err, out)
		}
		code, stderr = ee.ExitCode(), string(out)
	} else {
		if err := os.Chmod(sock, 0o400); err != nil { // no write: connect(2) is refused
			t.Fatal(err)
		}
		r := runCLI(t.Context(), "", "call", "--config", config, "get_device_status")
		code, stderr = r.code, r.stderr
	}
	if code != exitError || !strings.Contains(stderr, "permission denied") || !strings.Contains(stderr, "usermod -aG devicectl") {
		t.Errorf("exit %d, output %q; want exit 1 naming the permission and the group", code, stderr)
	}
}

// The same on a real mixer: the daemon's ALSA speaker (a PulseAudio null sink behind amixer -D
// pulse) is set through the socket; with no daemon, call opens it itself, keeps its level, and
// leaves it playing at the level the call set.
func TestCallRealSpeaker(t *testing.T) {
	pulsetest.Need(t, "amixer", "alsa-utils")
	pactl := pulsetest.Need(t, "pactl", "pulseaudio-utils")
	pulsetest.Start(t)
	sink := func(what string) string {
		t.Helper()
		out, err := exec.Command(pactl, "get-sink-"+what, pulsetest.Sink).Output()
		if err != nil {
			t.Fatalf("pactl get-sink-%s: %v", what, err)
		}
		return string(out)
	}
	srv := standin.Start(t, nil)
	sock := filepath.Join(sockdir.New(t), "control.sock")
	config := controlConfig(t, srv.URL(), sock, "hardware:\n  speaker: {driver: alsa, device: pulse, control: Master}\n  face: {driver: sim}\n")

	d := startRun(t, "--config", config)
	standin.NextRegistration(t, srv)
	if r := runCLI(t.Context(), "", "call", "--config", config, "amplify_volume", `{"level":50}`); r.code != exitOK {
		t.Fatalf("call amplify_volume: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if out := sink("volume"); !strings.Contains(out, " 50% ") {
		t.Errorf("after the call through the daemon the sink says %s; want 50%%", out)
	}
	d.stop()
	if !strings.Contains(d.stderr.String(), "tool=amplify_volume") {
		t.Errorf("the daemon did not log the call:\n%s", d.stderr.String())
	}

	// The stop muted the sink. call alone sets it and leaves it so.
	if r := runCLI(t.Context(), "", "call", "--config", config, "amplify_volume", `{"level":30}`); r.code != exitOK {
		t.Fatalf("call amplify_volume without a daemon: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if out := sink("volume"); !strings.Contains(out, " 30% ") {
		t.Errorf("after call without a daemon the sink says %s; want 30%%", out)
	}
	if out := sink("mute"); !strings.Contains(out, "no") {
		t.Errorf("call left the sink muted: %s", out)
	}
	// Opening it again keeps the level (no start volume of 40).
	if v, conn := status(t, config); v != 30 || conn != "no daemon (devicectl call)" {
		t.Errorf("call get_device_status: volume %d, connection %q; want 30 from the sink itself", v, conn)
	}
}
