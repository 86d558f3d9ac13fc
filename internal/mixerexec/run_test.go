package mixerexec

import (
	"strings"
	"testing"
)

func TestArgvQuotesWhatWouldMislead(t *testing.T) {
	got := argv("amixer", []string{"-D", "hw:1", "sget", "Master Playback", ""})
	want := `amixer -D hw:1 sget "Master Playback" ""`
	if got != want {
		t.Errorf("argv = %s, want %s", got, want)
	}
	if got, want := oneLine("ALSA lib x: Invalid CTL nodev\n\namixer: Mixer attach nodev error\n"), "ALSA lib x: Invalid CTL nodev; amixer: Mixer attach nodev error"; got != want {
		t.Errorf("oneLine = %q, want %q", got, want)
	}
	if got := Clip(strings.Repeat("a", 300)); len(got) != 203 || !strings.HasSuffix(got, "...") {
		t.Errorf("clip left %d bytes: %q", len(got), got)
	}
}
