package doctor

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/devicectl/devicectl/device/agenttest"
	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/mic"
	"github.com/devicectl/devicectl/internal/testing/leakcheck"
	"github.com/devicectl/devicectl/internal/testing/pulsetest"
	"github.com/devicectl/devicectl/protocol"
)

// The level is what the microphone heard over the second: a square wave of a tenth of full
// scale is -20 dBFS.
func TestMicrophoneLevel(t *testing.T) {
	m := mic.NewSim(&mic.SimOptions{Fast: true})
	wave := make([]int16, hal.SampleRate)
	for i := range wave {
		wave[i] = 3277 * int16(1-2*(i/20%2))
	}
	m.Play(wave)
	r := Microphone(context.Background(), func(context.Context) (hal.Microphone, error) { return m, nil }, time.Second)
	if r.Err != nil || r.Warn != "" || !strings.Contains(r.Detail, "sim-microphone hears -20.0 dBFS over 1s (peak -20.0 dBFS)") {
		t.Errorf("row %+v", r)
	}
	failed := Microphone(context.Background(), func(context.Context) (hal.Microphone, error) { return nil, errors.New("parec: not found") }, time.Second)
	if failed.Err == nil || !strings.Contains(failed.Remedy, "hardware.microphone") {
		t.Errorf("a microphone that does not open: %+v", failed)
	}
}

// A real PulseAudio source with nothing playing is digital silence: a warning that says so.
func TestMicrophoneSilentPulseSource(t *testing.T) {
	leakcheck.Check(t)
	pulsetest.Start(t)
	pulsetest.Need(t, "parec", "pulseaudio-utils")
	r := Microphone(context.Background(), func(ctx context.Context) (hal.Microphone, error) {
		return mic.Open(ctx, mic.Config{Driver: mic.DriverPulse, Device: pulsetest.Sink + ".monitor"}, nil)
	}, time.Second)
	if r.Err != nil || !strings.Contains(r.Warn, "hears digital silence") {
		t.Errorf("row %+v", r)
	}
}

// Against a real PulseAudio: a plain source is not echo-cancelled; the source of
// module-echo-cancel is.
func TestEchoCancel(t *testing.T) {
	pulsetest.Start(t)
	pulsetest.Need(t, "pactl", "pulseaudio-utils")
	ctx := context.Background()
	r := EchoCancel(ctx, "", RunPactl)
	if !strings.Contains(r.Warn, pulsetest.Sink+".monitor is not echo-cancelled") {
		t.Errorf("the default source: %+v", r)
	}
	// The microphone is a second null sink's monitor (a room), the speaker the first sink.
	for _, args := range [][]string{
		{"load-module", "module-null-sink", "sink_name=room"},
		{"load-module", "module-echo-cancel", "aec_method=webrtc", "source_master=room.monitor", "sink_master=" + pulsetest.Sink, "source_name=ec_mic", "sink_name=ec_out"},
	} {
		if out, err := exec.Command("pactl", args...).CombinedOutput(); err != nil {
			t.Fatalf("pactl %v: %v %s", args, err, out)
		}
	}
	if r := EchoCancel(ctx, "ec_mic", RunPactl); r.Warn != "" || r.Detail != "ec_mic is echo-cancelled (module-echo-cancel)" {
		t.Errorf("the echo-cancelled source: %+v", r)
	}
	if r := EchoCancel(ctx, "room.monitor", RunPactl); !strings.Contains(r.Warn, "module-echo-cancel is loaded, but the microphone is room.monitor, not its source (ec_mic)") {
		t.Errorf("a source beside the echo-cancelled one: %+v", r)
	}
}

// doctor asks the server about voice without registering: a seed-002 server is said not to take
// it, one that takes it passes.
func TestServerVoice(t *testing.T) {
	leakcheck.Check(t)
	for _, tc := range []struct {
		voice *agenttest.Voice
		want  string
	}{
		{nil, "WARN this server does not take voice: it answers mcp/user/text with -32601"},
		{&agenttest.Voice{Text: func(context.Context, *agenttest.Device, protocol.UserTextParams) (protocol.UserResult, *jsonrpc2.Error) {
			return protocol.UserResult{}, nil
		}}, "OK the server takes mcp/user/text"},
	} {
		srv, err := agenttest.Start(&agenttest.Options{Voice: tc.voice})
		if err != nil {
			t.Fatal(err)
		}
		results := CheckServer(context.Background(), &Server{URL: srv.URL(), MAC: "AA-BB-CC-DD-EE-FF", HandshakeTimeout: 5 * time.Second, Voice: true})
		srv.Close()
		last := results[len(results)-1]
		got := "OK " + last.Detail
		if last.Warn != "" {
			got = "WARN " + last.Warn
		}
		if last.Name != "voice" || !strings.HasPrefix(got, tc.want) {
			t.Errorf("rows %s; last %+v, want %q", names(results), last, tc.want)
		}
	}
}
