package console

import (
	"fmt"
	"strings"
	"sync"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/faces"
)

// Panel shows the simulated hardware in `devicectl sim`: the face as a picture, redrawn when
// the expression changes, and a volume bar, redrawn when either changes. The sim backends call
// it from their OnChange hooks, i.e. from the tool call that made the change, so a change is
// on screen before the call's response is printed.
type Panel struct {
	out *SyncWriter

	mu     sync.Mutex
	volume int
	face   hal.Expression
	muted  bool // stop drawing (on the way out, when halting the hardware would redraw)
}

// volumeBarWidth is the bar's length in cells: 5% each.
const volumeBarWidth = 20

// NewPanel returns a panel that draws on out, starting from volume and face.
func NewPanel(out *SyncWriter, volume int, face hal.Expression) *Panel {
	return &Panel{out: out, volume: volume, face: face}
}

// Draw shows the whole panel: the face, then the status line.
func (p *Panel) Draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.muted {
		p.out.PrintBlock(p.picture() + p.status())
	}
}

// SetVolume is the speaker's OnChange hook.
func (p *Panel) SetVolume(percent int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.volume = percent
	if !p.muted {
		p.out.PrintBlock(p.status())
	}
}

// SetFace is the face's OnChange hook.
func (p *Panel) SetFace(e hal.Expression) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.face = e
	if !p.muted {
		p.out.PrintBlock(p.picture() + p.status())
	}
}

// Mute stops all drawing.
func (p *Panel) Mute() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.muted = true
}

func (p *Panel) picture() string {
	var b strings.Builder
	for line := range strings.Lines(faces.TerminalFace(p.face)) {
		if line != "\n" {
			b.WriteString("    ")
		}
		b.WriteString(line)
	}
	return b.String()
}

func (p *Panel) status() string {
	return fmt.Sprintf("    volume %s %3d%%   face %s\n", VolumeBar(p.volume), p.volume, p.face)
}

// VolumeBar draws percent (0..100) as a bar of volumeBarWidth cells.
func VolumeBar(percent int) string {
	full := min(max(percent, 0), 100) * volumeBarWidth / 100
	return strings.Repeat("█", full) + strings.Repeat("░", volumeBarWidth-full)
}
