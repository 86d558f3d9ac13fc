//go:build !devicectl_omit_serve || !devicectl_omit_sim

package main

import (
	"fmt"
	"strings"
	"sync"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/faces"
)

// panel shows the simulated hardware in `devicectl sim`: the face as a picture, redrawn when
// the expression changes, and a volume bar, redrawn when either changes. The sim backends call
// it from their OnChange hooks, i.e. from the tool call that made the change, so a change is
// on screen before the call's response is printed.
type panel struct {
	out *syncWriter

	mu     sync.Mutex
	volume int
	face   hal.Expression
	muted  bool // stop drawing (on the way out, when halting the hardware would redraw)
}

// volumeBarWidth is the bar's length in cells: 5% each.
const volumeBarWidth = 20

func newPanel(out *syncWriter, volume int, face hal.Expression) *panel {
	return &panel{out: out, volume: volume, face: face}
}

// draw shows the whole panel: the face, then the status line.
func (p *panel) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.muted {
		p.out.print(p.picture() + p.status())
	}
}

// setVolume is the speaker's OnChange hook.
func (p *panel) setVolume(percent int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.volume = percent
	if !p.muted {
		p.out.print(p.status())
	}
}

// setFace is the face's OnChange hook.
func (p *panel) setFace(e hal.Expression) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.face = e
	if !p.muted {
		p.out.print(p.picture() + p.status())
	}
}

// mute stops all drawing.
func (p *panel) mute() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.muted = true
}

func (p *panel) picture() string {
	var b strings.Builder
	for line := range strings.Lines(faces.TerminalFace(p.face)) {
		if line != "\n" {
			b.WriteString("    ")
		}
		b.WriteString(line)
	}
	return b.String()
}

func (p *panel) status() string {
	return fmt.Sprintf("    volume %s %3d%%   face %s\n", volumeBar(p.volume), p.volume, p.face)
}

// volumeBar draws percent (0..100) as a bar of volumeBarWidth cells.
func volumeBar(percent int) string {
	full := min(max(percent, 0), 100) * volumeBarWidth / 100
	return strings.Repeat("█", full) + strings.Repeat("░", volumeBarWidth-full)
}
