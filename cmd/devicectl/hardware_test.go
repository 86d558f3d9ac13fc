package main

import (
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

	"github.com/devicectl/devicectl/device/agenttest"
	"github.com/devicectl/devicectl/internal/testing/pulsetest"
	"github.com/devicectl/devicectl/internal/testing/shscript"
	"github.com/devicectl/devicectl/internal/testing/standin"
)

// doctor walks to the server and through the parts, and fails, with a remedy, where they do.
func TestDoctor(t *testing.T) {
	srv, err := agenttest.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := t.TempDir()
	face := shscript.Write(t, dir, "show-face", "exit 0\n")
	path := standin.WriteFile(t, "devicectl.yaml", "hardware:\n  face: {driver: command, command: ["+face+"]}\n")

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

	ca := standin.WriteFile(t, "ca.pem", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})))
	config := standin.WriteFile(t, "devicectl.yaml", "server:\n  ca_file: "+ca+"\n")
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
	config := standin.WriteFile(t, "devicectl.yaml", "server:\n  token_file: "+token+"\nhardware:\n  face: {driver: command, command: [/nonexistent/face], optional: true}\n")
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
	ok := standin.Start(t, nil)
	args[4] = ok.URL()
	if r := runCLI(t.Context(), "", args...); r.code != exitOK || !strings.Contains(r.stdout, "WARN") {
		t.Errorf("exit %d with only a warning left, want 0:\n%s", r.code, r.stdout)
	}
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
	config := standin.WriteFile(t, "devicectl.yaml", "hardware:\n  speaker: {driver: alsa, device: pulse}\n")
	r := runCLI(t.Context(), "", "doctor", "--config", config, "--server", standin.Start(t, nil).URL(), "--mac", "AA-BB-CC-DD-EE-FF")
	if r.code != exitOK || !regexp.MustCompile(`speaker +OK +alsa:pulse/Master, volume 63%`).MatchString(r.stdout) {
		t.Errorf("exit %d; want the speaker read at 63%% in:\n%s", r.code, r.stdout)
	}
	if out, _ := exec.Command(pactl, "get-sink-volume", pulsetest.Sink).Output(); !strings.Contains(string(out), " 63% ") {
		t.Errorf("after doctor the sink says %s; want 63%% still", out)
	}
}
