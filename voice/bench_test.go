package voice

import (
	"context"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/devicectl/devicectl/hal/mic"
)

// roomMic hands out a quiet room's noise as fast as it is read, for frames frames.
type roomMic struct {
	noise  []int16
	frames int
}

func (m *roomMic) String() string { return "room" }
func (m *roomMic) Halt() error    { return nil }
func (m *roomMic) Read(_ context.Context, p []int16) (int, error) {
	if m.frames == 0 {
		return 0, io.EOF
	}
	m.frames--
	return copy(p, m.noise), nil
}

// BenchmarkListenSilence is the Listener's cost per second of a quiet room (50 frames): what
// listening costs the device when nobody speaks.
func BenchmarkListenSilence(b *testing.B) {
	noise := room(rand.New(rand.NewPCG(1, 1)), -60, mic.FrameDuration)
	b.ReportAllocs()
	m := &roomMic{noise: noise, frames: b.N * int(time.Second/mic.FrameDuration)}
	b.ResetTimer()
	l, err := Listen(m, nil)
	if err != nil {
		b.Fatal(err)
	}
	for range l.Utterances() {
		b.Fatal("an utterance in silence")
	}
	b.StopTimer()
	l.Halt()
}
