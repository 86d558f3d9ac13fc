//go:build !devicectl_omit_sim

package main

import (
	"context"
	"io"
	"testing"

	"github.com/devicectl/devicectl/internal/simsession"
	"github.com/devicectl/devicectl/internal/testing/pulsetest"
)

// sim --voice-input: a WAV plays in as the sim device's microphone; the server transcribes it,
// the console shows what was heard, the volume is set and the reply shown (and spoken, into a
// private PulseAudio).
func TestSimVoiceInput(t *testing.T) {
	needVoice(t)
	pulsetest.Start(t)
	wav := utterance(t, "slt", "set the volume to thirty", 0.5)
	ctx, cancel := context.WithCancel(t.Context())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		defer outW.Close()
		done <- execute(ctx, []string{"sim", "--voice-input", wav}, inR, outW, io.Discard)
	}()
	defer func() {
		inW.Close()
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("sim exited %d", code)
		}
	}()
	out := newLineWaiter(outR)
	out.waitFor(t, simsession.MAC+" heard: set the volume to thirty")
	out.waitFor(t, "30")
}
