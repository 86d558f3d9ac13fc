package console

import (
	"bytes"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/faces"
)

func TestVolumeBar(t *testing.T) {
	for percent, full := range map[int]int{-5: 0, 0: 0, 4: 0, 5: 1, 50: 10, 99: 19, 100: 20, 150: 20} {
		bar := VolumeBar(percent)
		if got := strings.Count(bar, "█"); got != full || strings.Count(bar, "░") != volumeBarWidth-full {
			t.Errorf("VolumeBar(%d) = %s: %d full cells, want %d of %d", percent, bar, got, full, volumeBarWidth)
		}
	}
}

// A volume change redraws the status line, a face change the picture too, and after Mute
// nothing is drawn.
func TestPanel(t *testing.T) {
	var b bytes.Buffer
	p := NewPanel(NewSyncWriter(&b), 40, hal.Idle)
	p.SetVolume(80)
	if got, want := b.String(), "    volume "+VolumeBar(80)+"  80%   face idle\n"; got != want {
		t.Errorf("after SetVolume: %q, want %q", got, want)
	}
	b.Reset()
	p.SetFace(hal.Expression("smile"))
	got := b.String()
	for line := range strings.Lines(faces.TerminalFace("smile")) {
		if strings.TrimSpace(line) != "" && !strings.Contains(got, "\n    "+line) {
			t.Errorf("after SetFace, the face's line %q is not there, indented:\n%s", line, got)
		}
	}
	if !strings.HasSuffix(got, "  80%   face smile\n") {
		t.Errorf("after SetFace, no status line:\n%s", got)
	}
	b.Reset()
	p.Draw()
	if b.String() != got {
		t.Errorf("Draw:\n%s\nwant what SetFace drew:\n%s", b.String(), got)
	}
	b.Reset()
	p.Mute()
	p.SetVolume(10)
	p.SetFace(hal.Idle)
	p.Draw()
	if b.Len() != 0 {
		t.Errorf("drawn after Mute: %q", b.String())
	}
}
