package main

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/devicectl/devicectl/device/agenttest"
	"github.com/devicectl/devicectl/internal/pulsetest"
)

// script writes an executable shell script into dir and returns its path.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// waitFile polls path until it holds want, or fails after a few seconds.
func waitFile(t *testing.T, path, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(path)
		if string(b) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s holds %q, want %q", filepath.Base(path), b, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func startRun(t *testing.T, srv *agenttest.Server, config string) (stop func() result) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "devicectl.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan result, 1)
	go func() {
		done <- runCLI(ctx, "", "run", "--config", path, "--server", srv.URL(), "--mac", "AA-BB-CC-DD-EE-FF",
			"--state-dir", t.TempDir(), "--ping-interval", "1s")
	}()
	t.Cleanup(cancel)
	return func() result { cancel(); return <-done }
}

// run drives real parts as configured: the volume goes through amixer to a real PulseAudio sink
// and is read back from it, the face is a program of the user's, and replies are spoken through
// a program that reads them on stdin.
func TestRunDrivesConfiguredParts(t *testing.T) {
	pulsetest.Need(t, "amixer", "alsa-utils")
	pactl := pulsetest.Need(t, "pactl", "pulseaudio-utils")
	pulsetest.Start(t)
	srv, err := agenttest.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	dir := t.TempDir()
	faceLog, spoken := filepath.Join(dir, "faces"), filepath.Join(dir, "spoken")
	faceEnv := filepath.Join(dir, "face-env")
	face := script(t, dir, "show-face", `echo "$1" >> "$FACE_LOG"; env > "$FACE_ENV"`+"\n")
	t.Setenv("FACE_ENV", faceEnv)
	t.Setenv(tokenEnv, "s3cret-token")
	say := script(t, dir, "say", `cat >> "$SPOKEN"`+"\n")
	t.Setenv("FACE_LOG", faceLog)
	t.Setenv("SPOKEN", spoken)

	stop := startRun(t, srv, `
hardware:
  speaker: {driver: alsa, device: pulse, control: Master}
  face: {driver: command, command: [`+face+`]}
  speech: {driver: command, command: [`+say+`]}
`)
	d, err := srv.WaitDevice(waitCtx(t), "AA-BB-CC-DD-EE-FF")
	if err != nil {
		t.Fatal(err)
	}
	waitFile(t, faceLog, "idle\n") // opening the face shows idle
	if env, err := os.ReadFile(faceEnv); err != nil || strings.Contains(string(env), "s3cret-token") || !strings.Contains(string(env), "FACE_LOG=") {
		t.Errorf("the face program's environment (%v) holds the token, or is not the daemon's:\n%s", err, env)
	}
	// Every real speaker starts at hardware.speaker.start_volume.
	if out, err := exec.Command(pactl, "get-sink-volume", pulsetest.Sink).Output(); err != nil || !strings.Contains(string(out), " 40% ") {
		t.Errorf("at start the sink says %s, %v; want 40%%", out, err)
	}

	resp, err := d.Execute(waitCtx(t), "amplify_volume", json.RawMessage(`{"level": 37}`))
	if err != nil || resp.Error != nil {
		t.Fatalf("amplify_volume: %+v, %v", resp, err)
	}
	// The sink itself says 37%, not devicectl.
	out, err := exec.Command(pactl, "get-sink-volume", pulsetest.Sink).Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), " 37% ") {
		t.Errorf("pactl get-sink-volume: %s; want 37%%", out)
	}
	resp, err = d.Execute(waitCtx(t), "get_device_status", json.RawMessage(`{}`))
	if err != nil || resp.Error != nil || !strings.Contains(string(*resp.Result), `"volume":37`) {
		t.Errorf("get_device_status: %s, %v; want volume 37", *resp.Result, err)
	}

	resp, err = d.Execute(waitCtx(t), "set_virtual_human_expression", json.RawMessage(`{"expression": "smile"}`))
	if err != nil || resp.Error != nil {
		t.Fatalf("set_virtual_human_expression: %+v, %v", resp, err)
	}
	waitFile(t, faceLog, "idle\nsmile\n")

	if err := d.Say(waitCtx(t), "你好，我是设备。"); err != nil {
		t.Fatal(err)
	}
	waitFile(t, spoken, "你好，我是设备。\n")

	if r := stop(); r.code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	// Halting on the way out: the face shows idle, the speaker is muted.
	waitFile(t, faceLog, "idle\nsmile\nidle\n")
	out, _ = exec.Command(pactl, "get-sink-mute", pulsetest.Sink).Output()
	if !strings.Contains(string(out), "yes") {
		t.Errorf("after stop the sink is not muted: %s", out)
	}
}

// A part that fails at start-up is an error naming it; marked optional, the device starts without
// its tool and says why.
func TestMissingPart(t *testing.T) {
	srv, err := agenttest.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	missing := filepath.Join(t.TempDir(), "no-such-program")
	config := `
hardware:
  face: {driver: command, command: [` + missing + `], optional: OPTIONAL}
`
	path := filepath.Join(t.TempDir(), "devicectl.yaml")
	os.WriteFile(path, []byte(strings.ReplaceAll(config, "OPTIONAL", "false")), 0o600)
	r := runCLI(t.Context(), "", "run", "--config", path, "--server", srv.URL(), "--mac", "AA-BB-CC-DD-EE-FF", "--state-dir", t.TempDir())
	if r.code != exitError || !strings.Contains(r.stderr, "hardware.face: ") || !strings.Contains(r.stderr, missing) {
		t.Errorf("exit %d, stderr %q; want 1 and an error naming hardware.face and the program", r.code, r.stderr)
	}

	stop := startRun(t, srv, strings.ReplaceAll(config, "OPTIONAL", "true"))
	d, err := srv.WaitDevice(waitCtx(t), "AA-BB-CC-DD-EE-FF")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range d.Tools {
		names = append(names, tool.Name)
	}
	if strings.Join(names, ",") != "amplify_volume,get_device_status" {
		t.Errorf("registered %v; want the face's tool left out", names)
	}
	r = stop()
	if r.code != exitOK || !strings.Contains(r.stderr, "starting without set_virtual_human_expression") {
		t.Errorf("exit %d; want 0 and a warning about the missing face in:\n%s", r.code, r.stderr)
	}
}

// doctor walks to the server and through the parts, and fails, with a remedy, where they do.
func TestDoctor(t *testing.T) {
	srv, err := agenttest.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := t.TempDir()
	face := script(t, dir, "show-face", "exit 0\n")
	path := filepath.Join(dir, "devicectl.yaml")
	os.WriteFile(path, []byte("hardware:\n  face: {driver: command, command: ["+face+"]}\n"), 0o600)

	r := runCLI(t.Context(), "", "doctor", "--config", path, "--server", srv.URL(), "--mac", "AA-BB-CC-DD-EE-FF")
	if r.code != exitOK {
		t.Fatalf("exit %d against a working server; stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, row := range []string{"config ", "mac ", "token ", "tcp ", "websocket ", "speaker ", "face ", "speech "} {
		if !strings.Contains(r.stdout, row) || !strings.Contains(r.stdout, "OK") {
			t.Errorf("no OK row %q in:\n%s", row, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "FAIL") {
		t.Errorf("a check failed:\n%s", r.stdout)
	}

	// Nothing listens on a port just closed; the face program is gone.
	addr := srv.URL()
	srv.Close()
	os.Remove(face)
	r = runCLI(t.Context(), "", "doctor", "--config", path, "--server", addr, "--mac", "AA-BB-CC-DD-EE-FF")
	if r.code != exitError {
		t.Errorf("exit %d with the server down, want %d", r.code, exitError)
	}
	for _, want := range []string{"tcp", "FAIL", "is the server running", "face", "hardware.face: ", "-> is hardware.face.command's program installed"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no %q in:\n%s", want, r.stdout)
		}
	}
}

// doctor checks the server's certificate: an unknown one fails with a remedy, the right CA file
// passes, and then the handshake is what fails against a server that is not a device endpoint.
func TestDoctorTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is the point
	srv.StartTLS()
	defer srv.Close()
	url := "wss://" + srv.Listener.Addr().String() + "/device"
	r := runCLI(t.Context(), "", "doctor", "--config", "/dev/null", "--server", url, "--mac", "AA-BB-CC-DD-EE-FF", "--hardware", "sim")
	if r.code != exitError || !regexp.MustCompile(`tls +FAIL .*certificate`).MatchString(r.stdout) || !strings.Contains(r.stdout, "set server.ca_file") {
		t.Errorf("exit %d; want a tls FAIL about the certificate with a remedy in:\n%s", r.code, r.stdout)
	}

	ca := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(ca, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(t.TempDir(), "devicectl.yaml")
	os.WriteFile(config, []byte("server:\n  ca_file: "+ca+"\n"), 0o600)
	r = runCLI(t.Context(), "", "doctor", "--config", config, "--server", url, "--mac", "AA-BB-CC-DD-EE-FF", "--hardware", "sim")
	if !regexp.MustCompile(`tls +OK +verified`).MatchString(r.stdout) || !regexp.MustCompile(`websocket +FAIL .*HTTP 404`).MatchString(r.stdout) {
		t.Errorf("want tls OK and a websocket FAIL naming HTTP 404 in:\n%s", r.stdout)
	}
}

// doctor names a refused token as such, warns about a token file others can read without failing,
// and treats a missing optional part as a warning, as run treats it.
func TestDoctorTokenAndOptionalParts(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusUnauthorized)
	}))
	defer srv.Close()
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	os.WriteFile(token, []byte("s3cret\n"), 0o644)
	os.Chmod(token, 0o644) // whatever the umask
	config := filepath.Join(dir, "devicectl.yaml")
	os.WriteFile(config, []byte("server:\n  token_file: "+token+"\nhardware:\n  face: {driver: command, command: [/nonexistent/face], optional: true}\n"), 0o600)
	args := []string{"doctor", "--config", config, "--server", "ws" + strings.TrimPrefix(srv.URL, "http") + "/device", "--mac", "AA-BB-CC-DD-EE-FF"}

	r := runCLI(t.Context(), "", args...)
	for _, re := range []string{
		`token +WARN +.*token is readable by group or others \(mode -rw-r--r--\)`,
		`-> chmod 600 .*token`,
		`websocket +FAIL .*HTTP 401`,
		`-> the server refused the token`,
		`face +WARN .*/nonexistent/face.*\(optional: run starts without set_virtual_human_expression\)`,
	} {
		if !regexp.MustCompile(re).MatchString(r.stdout) {
			t.Errorf("no line matching %q in:\n%s", re, r.stdout)
		}
	}
	if r.code != exitError || strings.Contains(r.stdout, "s3cret") {
		t.Errorf("exit %d (want %d for the refused token), or the token shows:\n%s", r.code, exitError, r.stdout)
	}

	// Fixed: the warnings alone do not fail the check.
	os.Chmod(token, 0o600)
	ok := agenttestServer(t)
	args[4] = ok.URL()
	if r := runCLI(t.Context(), "", args...); r.code != exitOK || !strings.Contains(r.stdout, "WARN") {
		t.Errorf("exit %d with only a warning left, want 0:\n%s", r.code, r.stdout)
	}
}

func agenttestServer(t *testing.T) *agenttest.Server {
	t.Helper()
	srv, err := agenttest.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// doctor reads a speaker that can be read without changing its level: it may run beside the
// service.
func TestDoctorLeavesTheVolume(t *testing.T) {
	pulsetest.Need(t, "amixer", "alsa-utils")
	pactl := pulsetest.Need(t, "pactl", "pulseaudio-utils")
	pulsetest.Start(t)
	if out, err := exec.Command(pactl, "set-sink-volume", pulsetest.Sink, "63%").CombinedOutput(); err != nil {
		t.Fatalf("pactl: %v: %s", err, out)
	}
	config := filepath.Join(t.TempDir(), "devicectl.yaml")
	os.WriteFile(config, []byte("hardware:\n  speaker: {driver: alsa, device: pulse}\n"), 0o600)
	r := runCLI(t.Context(), "", "doctor", "--config", config, "--server", agenttestServer(t).URL(), "--mac", "AA-BB-CC-DD-EE-FF")
	if r.code != exitOK || !regexp.MustCompile(`speaker +OK +alsa:pulse/Master, volume 63%`).MatchString(r.stdout) {
		t.Errorf("exit %d; want the speaker read at 63%% in:\n%s", r.code, r.stdout)
	}
	if out, _ := exec.Command(pactl, "get-sink-volume", pulsetest.Sink).Output(); !strings.Contains(string(out), " 63% ") {
		t.Errorf("after doctor the sink says %s; want 63%% still", out)
	}
}
