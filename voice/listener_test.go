package voice

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpiotest"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/mic"
	"github.com/devicectl/devicectl/internal/testing/flite"
	"github.com/devicectl/devicectl/internal/testing/leakcheck"
	"github.com/devicectl/devicectl/internal/testing/pulsetest"
)

// stepMic is a microphone the test hands each frame to, so the test decides what the listener
// has heard when.
type stepMic struct{ frames chan []int16 }

func (m *stepMic) String() string { return "step-microphone" }
func (m *stepMic) Halt() error    { return nil }
func (m *stepMic) Read(ctx context.Context, p []int16) (int, error) {
	select {
	case f, ok := <-m.frames:
		if !ok {
			return 0, io.EOF
		}
		return copy(p, f), nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

var _ hal.Microphone = (*stepMic)(nil)

func next(t *testing.T, l *Listener) Utterance {
	t.Helper()
	select {
	case u, ok := <-l.Utterances():
		if !ok {
			t.Fatalf("the listener stopped: %v", l.Err())
		}
		return u
	case <-time.After(10 * time.Second):
		t.Fatal("no utterance")
	}
	return Utterance{}
}

// In vad mode every utterance is delivered, and the start of each is told at once (barge-in).
func TestListenerVAD(t *testing.T) {
	leakcheck.Check(t)
	said := flite.Samples(t, "set the volume to thirty")
	r := rand.New(rand.NewPCG(1, 2))
	m := mic.NewSim(&mic.SimOptions{Fast: true})
	m.Play(room(r, -65, time.Second))
	m.Play(said)
	m.Play(room(r, -65, time.Second))
	m.Play(said)
	var starts atomic.Int32
	l, err := Listen(m, &ListenerOptions{OnSpeech: func() { starts.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Halt()
	for i := range 2 {
		u := next(t, l)
		if d := u.Duration(); d < 1200*time.Millisecond || d > 2500*time.Millisecond {
			t.Errorf("utterance %d lasts %v; flite said %v", i, d, time.Duration(len(said))*time.Second/hal.SampleRate)
		}
	}
	if err := l.Halt(); err != nil {
		t.Fatal(err)
	}
	if n := starts.Load(); n != 2 {
		t.Errorf("speech started %d times, want 2", n)
	}
	if _, ok := <-l.Utterances(); ok {
		t.Error("Utterances still open after Halt")
	}
}

// A microphone that ends (a file) stops the listener, saying why.
func TestListenerMicrophoneEnds(t *testing.T) {
	leakcheck.Check(t)
	m := &stepMic{frames: make(chan []int16)}
	l, err := Listen(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Halt()
	close(m.frames)
	if _, ok := <-l.Utterances(); ok {
		t.Fatal("an utterance from nothing")
	}
	if err := l.Err(); !errors.Is(err, io.EOF) {
		t.Errorf("Err = %v, want io.EOF", err)
	}
}

// Push to talk: pressing the button starts an utterance (and barge-in), releasing it ends it;
// what is said with the button up is not taken, however loud.
func TestListenerButton(t *testing.T) {
	leakcheck.Check(t)
	pin := &gpiotest.Pin{N: "GPIO17", EdgesChan: make(chan gpio.Level)}
	m := &stepMic{frames: make(chan []int16)}
	pressed := make(chan struct{}, 1)
	l, err := Listen(m, &ListenerOptions{Mode: ModeButton, Button: pin, OnSpeech: func() { pressed <- struct{}{} }})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Halt()
	if pin.P != gpio.PullUp {
		t.Errorf("the button's pin is pulled %v, want up", pin.P)
	}
	frame := func(v int16) []int16 {
		f := make([]int16, mic.FrameSamples)
		for i := range f {
			f[i] = v * int16(1-2*(i%2))
		}
		return f
	}
	for range 50 { // loud talk, button up
		m.frames <- frame(8000)
	}
	pin.EdgesChan <- gpio.Low
	// The press is taken between two frames, and told before the next is read. A press already
	// told wins over a read already waiting: a frame sent then would be the utterance's first.
	for down := false; !down; {
		select {
		case <-pressed:
			down = true
			continue
		default:
		}
		select {
		case m.frames <- frame(0):
		case <-pressed:
			down = true
		}
	}
	for i := range 20 {
		m.frames <- frame(int16(100 + i))
	}
	pin.EdgesChan <- gpio.High
	// The release reaches the capture loop from the button's goroutine while the microphone goes
	// on: at a microphone's pace, within a few frames.
	pace := time.NewTicker(mic.FrameDuration)
	defer pace.Stop()
	var u Utterance
	for got := false; !got; {
		select {
		case <-pace.C:
			select {
			case m.frames <- frame(0):
			case u = <-l.Utterances():
				got = true
			}
		case u = <-l.Utterances():
			got = true
		case <-time.After(10 * time.Second):
			t.Fatal("no utterance after the release")
		}
	}
	n := len(u.Samples) / mic.FrameSamples
	if n < 20 || n > 30 {
		t.Fatalf("the utterance holds %d frames, want the 20 said while pressed (and the few read as it was released)", n)
	}
	for i := range 20 {
		if got := u.Samples[i*mic.FrameSamples]; got != int16(100+i) {
			t.Fatalf("frame %d of the utterance starts %d, want %d", i, got, 100+i)
		}
	}
	select {
	case <-pressed:
		t.Error("the release was taken for a press")
	default:
	}
}

// Wake mode with pocketsphinx: what is said before the keyword, and the keyword itself, are not
// taken; the utterance after it is.
func TestListenerWakeWord(t *testing.T) {
	leakcheck.Check(t)
	pulsetest.Need(t, "pocketsphinx_continuous", "pocketsphinx")
	kw := flite.Samples(t, "hello computer")
	cmd := flite.Samples(t, "set the volume to thirty")
	other := flite.Samples(t, "what is the weather")
	sp, err := NewPocketSphinx("hello computer", nil)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	m := mic.NewSim(nil) // real time: pocketsphinx hears the keyword while the listener goes on
	m.Play(room(r, -65, 500*time.Millisecond))
	m.Play(other)
	m.Play(room(r, -65, time.Second))
	m.Play(kw)
	m.Play(room(r, -65, 1500*time.Millisecond))
	m.Play(cmd)
	m.Play(room(r, -65, time.Second))
	l, err := Listen(m, &ListenerOptions{Mode: ModeWake, Spotter: sp})
	if err != nil {
		sp.Close()
		t.Fatal(err)
	}
	defer l.Halt()
	u := next(t, l)
	want := time.Duration(len(other)+len(kw))*time.Second/hal.SampleRate + 3*time.Second
	if u.Start < want-200*time.Millisecond {
		t.Errorf("took the utterance at %v; the command starts at %v", u.Start, want)
	}
	if d, said := u.Duration(), time.Duration(len(cmd))*time.Second/hal.SampleRate; d < said-500*time.Millisecond || d > said+time.Second {
		t.Errorf("utterance of %v; the command lasts %v", d, said)
	}
}

func TestListenerOptions(t *testing.T) {
	m := mic.NewSim(nil)
	for _, o := range []ListenerOptions{{Mode: "always"}, {Mode: ModeButton}, {Mode: ModeWake}, {VAD: VADConfig{MinSpeech: time.Second, MaxUtterance: time.Millisecond * 500}}} {
		if l, err := Listen(m, &o); err == nil {
			l.Halt()
			t.Errorf("Listen(%+v) succeeded", o)
		}
	}
}
