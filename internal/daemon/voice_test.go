package daemon

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/devicectl/devicectl/device/agenttest"
	"github.com/devicectl/devicectl/internal/testing/flite"
	"github.com/devicectl/devicectl/internal/testing/pulsetest"
	"github.com/devicectl/devicectl/internal/testing/shscript"
	"github.com/devicectl/devicectl/internal/testing/standin"
	"github.com/devicectl/devicectl/protocol"
)

func voiceConfig(t *testing.T, url, wav, said string) string {
	script := shscript.Write(t, t.TempDir(), "say.sh", `cat >> "$1"`+"\n")
	return fmt.Sprintf(`server:
  url: %s
device:
  mac: AA-BB-CC-DD-EE-FF
  state_dir: %s
  language: en
hardware:
  speech:
    driver: command
    command: [%s, %s]
  microphone:
    driver: file
    file: %s
voice:
  listen: vad
log:
  level: debug
`, url, t.TempDir(), script, said, wav)
}

// devicectl run with a microphone: what it hears reaches the server as audio, what the server
// heard is logged at info, and the reply is spoken.
func TestRunHearsAndSpeaks(t *testing.T) {
	wav := flite.WAV(t, "set the volume to thirty")
	got := make(chan int, 1)
	srv := standin.Start(t, &agenttest.Options{Voice: &agenttest.Voice{
		Audio: func(ctx context.Context, d *agenttest.Device, p protocol.UserAudioParams) (protocol.UserResult, *jsonrpc2.Error) {
			got <- len(p.Audio) / 2
			go d.Say(context.Background(), "Volume set to thirty.")
			return protocol.UserResult{Status: protocol.StatusAccepted, Text: "set the volume to thirty", TurnID: "t1"}, nil
		},
	}})
	said := filepath.Join(t.TempDir(), "said.txt")
	d := startDaemon(t, voiceConfig(t, srv.URL(), wav, said), nil)
	select {
	case n := <-got:
		if n < 16000 {
			t.Errorf("the server got %d samples", n)
		}
	case <-standin.WaitCtx(t).Done():
		t.Fatalf("nothing heard reached the server:\n%s", d.stderr.String())
	}
	d.stderr.WaitFor(t, "the heard line", func(s string) bool {
		return strings.Contains(s, `msg=heard component=voice text="set the volume to thirty"`)
	})
	d.stderr.WaitFor(t, "the reply spoken", func(string) bool {
		b, _ := os.ReadFile(said)
		return strings.Contains(string(b), "Volume set to thirty.")
	})
	if !strings.Contains(d.stderr.String(), `msg=listening`) {
		t.Errorf("no listening line:\n%s", d.stderr.String())
	}
}

// Against a server of seed 002 the device says once that it does not take voice and goes on
// serving its tools.
func TestRunSeed002ServerNoVoice(t *testing.T) {
	wav := flite.WAV(t, "set the volume to thirty")
	srv := standin.Start(t, nil)
	d := startDaemon(t, voiceConfig(t, srv.URL(), wav, filepath.Join(t.TempDir(), "said.txt")), nil)
	dev := standin.NextRegistration(t, srv)
	d.stderr.WaitFor(t, "the no-voice line", func(s string) bool { return strings.Contains(s, "does not take voice") })
	if r, err := dev.Execute(standin.WaitCtx(t), "amplify_volume", []byte(`{"level": 30}`)); err != nil || r.Error != nil {
		t.Fatalf("a tool after voice was refused: %v %v", r, err)
	}
	if n := strings.Count(d.stderr.String(), "does not take voice"); n != 1 {
		t.Errorf("said %d times that the server does not take voice:\n%s", n, d.stderr.String())
	}
}

// Through a real PulseAudio: flite's words played into a null sink whose monitor is the
// device's microphone (parec) reach the server as one utterance.
func TestRunHearsThroughPulseAudio(t *testing.T) {
	wav := flite.WAV(t, "what is your status")
	pulsetest.Start(t)
	pulsetest.Need(t, "parec", "pulseaudio-utils")
	paplay := pulsetest.Need(t, "paplay", "pulseaudio-utils")
	got := make(chan int, 4)
	srv := standin.Start(t, &agenttest.Options{Voice: &agenttest.Voice{
		Audio: func(ctx context.Context, d *agenttest.Device, p protocol.UserAudioParams) (protocol.UserResult, *jsonrpc2.Error) {
			got <- len(p.Audio) / 2
			return protocol.UserResult{Status: protocol.StatusAccepted, Text: "what is your status", TurnID: "t1"}, nil
		},
	}})
	cfg := strings.Replace(voiceConfig(t, srv.URL(), wav, filepath.Join(t.TempDir(), "said.txt")),
		"    driver: file\n    file: "+wav+"\n", "    driver: pulse\n    device: "+pulsetest.Sink+".monitor\n", 1)
	d := startDaemon(t, cfg, nil)
	standin.NextRegistration(t, srv)
	d.stderr.WaitFor(t, "listening", func(s string) bool { return strings.Contains(s, "msg=listening") })
	if !strings.Contains(d.stderr.String(), "microphone=pulse:"+pulsetest.Sink+".monitor") {
		t.Fatalf("not listening to PulseAudio:\n%s", d.stderr.String())
	}
	if out, err := exec.Command(paplay, wav).CombinedOutput(); err != nil {
		t.Fatalf("paplay: %v %s", err, out)
	}
	select {
	case n := <-got:
		if n < 16000 {
			t.Errorf("the server got %d samples; flite spoke about a second and a half", n)
		}
	case <-standin.WaitCtx(t).Done():
		t.Fatalf("nothing heard reached the server:\n%s", d.stderr.String())
	}
}
