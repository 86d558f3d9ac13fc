package pulse

import (
	"context"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/internal/testing/pulsetest"
)

// startPulse starts a private PulseAudio daemon and returns the path of
// the real pactl.
func startPulse(t *testing.T) string {
	t.Helper()
	pactl := pulsetest.Need(t, "pactl", "pulseaudio-utils")
	pulsetest.Start(t)
	return pactl
}

func TestPactlNullSink(t *testing.T) {
	for _, sink := range []string{"", pulsetest.Sink} {
		t.Run("sink="+sink, func(t *testing.T) {
			pactl := startPulse(t)
			ctx := context.Background()
			s, err := New(ctx, &Options{Sink: sink})
			if err != nil {
				t.Fatal(err)
			}
			for v := 0; v <= 100; v += 7 {
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
			if err := s.SetVolume(ctx, 100); err != nil {
				t.Fatal(err)
			}
			if out := pulsetest.Run(t, pactl, "get-sink-volume", pulsetest.Sink); !strings.Contains(out, "/ 100% /") {
				t.Errorf("after SetVolume(100) pactl shows %q", out)
			}

			pulsetest.Run(t, pactl, "set-sink-volume", pulsetest.Sink, "23%")
			if got, err := s.Volume(ctx); err != nil || got != 23 {
				t.Errorf("Volume() after an outside change to 23%% = %d, %v; want 23", got, err)
			}
			pulsetest.Run(t, pactl, "set-sink-mute", pulsetest.Sink, "1")
			if got, err := s.Volume(ctx); err != nil || got != 0 {
				t.Errorf("Volume() of a muted sink = %d, %v; want 0", got, err)
			}
			if err := s.SetVolume(ctx, 55); err != nil {
				t.Fatal(err)
			}
			if out := pulsetest.Run(t, pactl, "get-sink-mute", pulsetest.Sink); strings.TrimSpace(out) != "Mute: no" {
				t.Errorf("after SetVolume(55) pactl shows %q, want unmuted", out)
			}

			if err := s.Halt(); err != nil {
				t.Fatal(err)
			}
			if out := pulsetest.Run(t, pactl, "get-sink-mute", pulsetest.Sink); strings.TrimSpace(out) != "Mute: yes" {
				t.Errorf("after Halt pactl shows %q, want muted", out)
			}
			if out := pulsetest.Run(t, pactl, "get-sink-volume", pulsetest.Sink); !strings.Contains(out, "/   0% /") {
				t.Errorf("after Halt pactl shows %q, want 0%%", out)
			}
			if got, err := s.Volume(ctx); err != nil || got != 0 {
				t.Errorf("Volume() after Halt = %d, %v; want 0", got, err)
			}
		})
	}
}

func TestPactlMissingSink(t *testing.T) {
	startPulse(t)
	_, err := New(context.Background(), &Options{Sink: "devicectl_nosink"})
	if err == nil || !strings.Contains(err.Error(), `sink "devicectl_nosink"`) || !strings.Contains(err.Error(), "No such entity") {
		t.Errorf("New with a missing sink = %v, want an error naming it with pactl's complaint", err)
	}
}
