package alsa

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/internal/testing/pulsetest"
)

// startPulse starts a private PulseAudio daemon and returns the path of
// the real amixer, after checking that ALSA's pulse plugin answers.
func startPulse(t *testing.T) string {
	t.Helper()
	amixer := pulsetest.Need(t, "amixer", "alsa-utils")
	srv := pulsetest.Start(t)
	out, err := exec.Command(amixer, "-D", "pulse", "sget", "Master").CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "CTL pulse") || strings.Contains(string(out), "_pulse.so") {
			pulsetest.Unavailable(t, "libasound2-plugins", "ALSA has no pulse plugin: %s", out)
		}
		t.Fatalf("amixer -D pulse sget Master: %v\n%s\ndaemon log:\n%s", err, out, srv.Log())
	}
	return amixer
}

func TestPulseNullSink(t *testing.T) {
	amixer := startPulse(t)
	ctx := context.Background()
	s, err := New(ctx, &Options{Device: "pulse", Control: "Master"})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []int{0, 1, 37, 50, 63, 99, 100, 42} {
		if err := s.SetVolume(ctx, v); err != nil {
			t.Fatalf("SetVolume(%d): %v", v, err)
		}
		got, err := s.Volume(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got != v {
			t.Errorf("Volume() after SetVolume(%d) = %d", v, got)
		}
	}

	pulsetest.Run(t, amixer, "-D", "pulse", "sset", "Master", "17%")
	if got, err := s.Volume(ctx); err != nil || got != 17 {
		t.Errorf("Volume() after an outside change to 17%% = %d, %v; want 17, read from the mixer", got, err)
	}
	pulsetest.Run(t, amixer, "-D", "pulse", "sset", "Master", "60%", "mute")
	if got, err := s.Volume(ctx); err != nil || got != 0 {
		t.Errorf("Volume() of a muted control at 60%% = %d, %v; want 0", got, err)
	}
	if err := s.SetVolume(ctx, 25); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Volume(ctx); err != nil || got != 25 {
		t.Errorf("Volume() after SetVolume(25) on a muted control = %d, %v; want 25 (unmuted)", got, err)
	}

	if err := s.Halt(); err != nil {
		t.Fatal(err)
	}
	if out := pulsetest.Run(t, amixer, "-D", "pulse", "sget", "Master"); !strings.Contains(out, "[0%] [off]") {
		t.Errorf("after Halt amixer shows\n%s\nwant 0%% and the switch off", out)
	}
	if got, err := s.Volume(ctx); err != nil || got != 0 {
		t.Errorf("Volume() after Halt = %d, %v; want 0", got, err)
	}
}

func TestPulseMissingControlAndDevice(t *testing.T) {
	startPulse(t)
	ctx := context.Background()
	_, err := New(ctx, &Options{Device: "pulse", Control: "Nope"})
	if err == nil || !strings.Contains(err.Error(), `control "Nope" on device "pulse"`) || !strings.Contains(err.Error(), "Unable to find simple control 'Nope'") {
		t.Errorf("New with a missing control = %v, want an error naming it with amixer's complaint", err)
	}
	_, err = New(ctx, &Options{Device: "devicectl_nodev"})
	if err == nil || !strings.Contains(err.Error(), `device "devicectl_nodev"`) || !strings.Contains(err.Error(), "Invalid CTL devicectl_nodev") {
		t.Errorf("New with a missing device = %v, want an error naming it with amixer's complaint", err)
	}
}
