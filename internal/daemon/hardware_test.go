package daemon

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/testing/pulsetest"
	"github.com/devicectl/devicectl/internal/testing/shscript"
	"github.com/devicectl/devicectl/internal/testing/standin"
)

// fileHolds fails the test unless the file at path holds want.
func fileHolds(t *testing.T, path, want string) {
	t.Helper()
	if b, err := os.ReadFile(path); err != nil || string(b) != want {
		t.Errorf("%s holds %q (%v), want %q", filepath.Base(path), b, err, want)
	}
}

// withParts is baseConfig with the hardware section hw instead of simulated parts.
func withParts(t *testing.T, url, hw string) string {
	return strings.Replace(standin.BaseConfig(t, url), "hardware:\n  mode: sim\n", hw, 1)
}

// The daemon drives real parts as configured: the volume goes through amixer to a real
// PulseAudio sink and is read back from it, the face is a program of the user's, and replies are
// spoken through a program that reads them on stdin.
func TestDrivesConfiguredParts(t *testing.T) {
	pulsetest.Need(t, "amixer", "alsa-utils")
	pactl := pulsetest.Need(t, "pactl", "pulseaudio-utils")
	pulsetest.Start(t)
	srv := standin.Start(t, nil)

	dir := t.TempDir()
	faceLog, spoken := filepath.Join(dir, "faces"), filepath.Join(dir, "spoken")
	faceEnv := filepath.Join(dir, "face-env")
	face := shscript.Write(t, dir, "show-face", `echo "$1" >> "$FACE_LOG"; env > "$FACE_ENV"`+"\n")
	t.Setenv("FACE_ENV", faceEnv)
	t.Setenv(config.TokenEnv, "s3cret-token")
	say := shscript.Write(t, dir, "say", `cat >> "$SPOKEN"`+"\n")
	t.Setenv("FACE_LOG", faceLog)
	t.Setenv("SPOKEN", spoken)

	d := startDaemon(t, withParts(t, srv.URL(), `hardware:
  speaker: {driver: alsa, device: pulse, control: Master}
  face: {driver: command, command: [`+face+`]}
  speech: {driver: command, command: [`+say+`]}
`), os.Getenv)
	dev := standin.NextRegistration(t, srv)
	fileHolds(t, faceLog, "idle\n") // opening the face shows idle, before the line is dialled
	if env, err := os.ReadFile(faceEnv); err != nil || strings.Contains(string(env), "s3cret-token") || !strings.Contains(string(env), "FACE_LOG=") {
		t.Errorf("the face program's environment (%v) holds the token, or is not the daemon's:\n%s", err, env)
	}
	// Every real speaker starts at hardware.speaker.start_volume.
	if out, err := exec.Command(pactl, "get-sink-volume", pulsetest.Sink).Output(); err != nil || !strings.Contains(string(out), " 40% ") {
		t.Errorf("at start the sink says %s, %v; want 40%%", out, err)
	}

	resp, err := dev.Execute(standin.WaitCtx(t), "amplify_volume", json.RawMessage(`{"level": 37}`))
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
	resp, err = dev.Execute(standin.WaitCtx(t), "get_device_status", json.RawMessage(`{}`))
	if err != nil || resp.Error != nil || !strings.Contains(string(*resp.Result), `"volume":37`) {
		t.Errorf("get_device_status: %+v, %v; want volume 37", resp, err)
	}

	// The face program has run when the call is answered.
	resp, err = dev.Execute(standin.WaitCtx(t), "set_virtual_human_expression", json.RawMessage(`{"expression": "smile"}`))
	if err != nil || resp.Error != nil {
		t.Fatalf("set_virtual_human_expression: %+v, %v", resp, err)
	}
	fileHolds(t, faceLog, "idle\nsmile\n")

	// Speech queues the reply and speaks it on its own goroutine; its log says when it has.
	if err := dev.Say(standin.WaitCtx(t), "你好，我是设备。"); err != nil {
		t.Fatal(err)
	}
	d.stderr.WaitCount(t, regexp.MustCompile(`msg="utterance spoken"`), 1)
	fileHolds(t, spoken, "你好，我是设备。\n")

	// Halting on the way out, before Run returns: the face shows idle, the speaker is muted.
	d.stop(t)
	fileHolds(t, faceLog, "idle\nsmile\nidle\n")
	out, _ = exec.Command(pactl, "get-sink-mute", pulsetest.Sink).Output()
	if !strings.Contains(string(out), "yes") {
		t.Errorf("after stop the sink is not muted: %s", out)
	}
}

// A part that fails at start-up is an error naming it; marked optional, the device starts without
// its tool and says why.
func TestMissingPart(t *testing.T) {
	srv := standin.Start(t, nil)
	missing := filepath.Join(t.TempDir(), "no-such-program")
	hw := `hardware:
  face: {driver: command, command: [` + missing + `], optional: OPTIONAL}
`
	c, err := config.Load(standin.WriteFile(t, "devicectl.yaml", withParts(t, srv.URL(), strings.ReplaceAll(hw, "OPTIONAL", "false"))))
	if err != nil {
		t.Fatal(err)
	}
	err = refusedStart(t, c)
	if err == nil || !strings.Contains(err.Error(), "hardware.face: ") || !strings.Contains(err.Error(), missing) {
		t.Errorf("Run = %v; want an error naming hardware.face and the program", err)
	}

	d := startDaemon(t, withParts(t, srv.URL(), strings.ReplaceAll(hw, "OPTIONAL", "true")), nil)
	dev := standin.NextRegistration(t, srv)
	if names := strings.Join(standin.ToolNames(dev), ","); names != "amplify_volume,get_device_status" {
		t.Errorf("registered %v; want the face's tool left out", names)
	}
	d.stop(t)
	if log := d.stderr.String(); !strings.Contains(log, "starting without set_virtual_human_expression") {
		t.Errorf("no warning about the missing face in:\n%s", log)
	}
}
