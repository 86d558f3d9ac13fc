package mic

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/internal/testing/pulsetest"
	"github.com/devicectl/devicectl/internal/wav"
)

// tone is a sine of freq Hz at amplitude amp (0..1) for d.
func tone(freq, amp float64, d time.Duration) []int16 {
	n := int(d * hal.SampleRate / time.Second)
	s := make([]int16, n)
	for i := range s {
		s[i] = int16(amp * 32767 * math.Sin(2*math.Pi*freq*float64(i)/hal.SampleRate))
	}
	return s
}

func readN(t *testing.T, m hal.Microphone, n int) []int16 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	buf := make([]int16, n)
	got, err := m.Read(ctx, buf)
	if err != nil || got != n {
		t.Fatalf("%s: read %d of %d samples: %v", m, got, n, err)
	}
	return buf
}

func rawFile(t *testing.T, samples []int16) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audio.raw")
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, samples)
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A program's PCM comes through sample for sample; when it ends, Read says so, with what the
// program said on stderr.
func TestPipeCommand(t *testing.T) {
	want := tone(440, 0.5, 100*time.Millisecond)
	m, err := Open(context.Background(), Config{Driver: DriverCommand, Command: []string{"cat", rawFile(t, want)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Halt()
	if got := readN(t, m, len(want)); !slices.Equal(got, want) {
		t.Errorf("the samples changed on the way")
	}
	if _, err := m.Read(t.Context(), make([]int16, 10)); err == nil || !strings.Contains(err.Error(), "capture program ended") {
		t.Errorf("after the program's output: %v", err)
	}

	m, err = Open(context.Background(), Config{Driver: DriverCommand, Command: []string{"sh", "-c", "echo no such source >&2; exit 3"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Read(t.Context(), make([]int16, 10))
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "no such source") {
		t.Errorf("a program that fails: %v", err)
	}
	if _, err := Open(context.Background(), Config{Driver: DriverCommand, Command: []string{"no-such-capture-program"}}, nil); err == nil {
		t.Error("a missing program opened")
	}
}

// Halt stops a program that would capture for ever, and Read then reports the halt.
func TestPipeHalt(t *testing.T) {
	m, err := Start(context.Background(), []string{"sh", "-c", "exec cat /dev/zero"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	readN(t, m, FrameSamples)
	m.Halt()
	select {
	case <-m.Done():
	default:
		t.Fatal("Halt returned before the capture ended")
	}
	var err2 error
	for err2 == nil { // what was captured before the halt may still be read
		_, err2 = m.Read(t.Context(), make([]int16, FrameSamples))
	}
	if !errors.Is(err2, hal.ErrHalted) {
		t.Errorf("Read after Halt: %v, want hal.ErrHalted", err2)
	}
}

// A reader that falls behind loses the oldest audio and gets the newest; the program never
// blocks on its output.
func TestPipeSlowReaderDropsOldest(t *testing.T) {
	var all []int16
	for i := range 200 { // 4 s of frames, each a constant i
		all = append(all, slices.Repeat([]int16{int16(i)}, FrameSamples)...)
	}
	p, err := Start(context.Background(), []string{"cat", rawFile(t, all)}, &PipeOptions{Buffer: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Halt()
	<-p.Done() // the program wrote everything without anyone reading
	var got []int16
	for {
		buf := make([]int16, FrameSamples)
		n, err := p.Read(t.Context(), buf)
		got = append(got, buf[:n]...)
		if err != nil {
			break
		}
	}
	if len(got) > 6*FrameSamples || len(got) == 0 || got[len(got)-1] != 199 {
		t.Errorf("kept %d samples ending in %v; want the newest few frames, ending in 199", len(got), got[len(got)-1:])
	}
}

// The pulse driver records a PulseAudio source: here a null sink's monitor, into which paplay
// plays a tone, as the device's microphone hears a room.
func TestPulseCapture(t *testing.T) {
	pulsetest.Start(t)
	pulsetest.Need(t, "parec", "pulseaudio-utils")
	paplay := pulsetest.Need(t, "paplay", "pulseaudio-utils")
	m, err := Open(context.Background(), Config{Driver: DriverPulse, Device: pulsetest.Sink + ".monitor"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Halt()
	if m.String() != "pulse:"+pulsetest.Sink+".monitor" {
		t.Errorf("String() = %q", m)
	}
	quiet := Level(readN(t, m, hal.SampleRate/5))
	path := filepath.Join(t.TempDir(), "tone.wav")
	f, _ := os.Create(path)
	wav.Encode(f, wav.Format{Rate: hal.SampleRate, Channels: 1}, tone(440, 0.5, time.Second))
	f.Close()
	play := exec.Command(paplay, path)
	if err := play.Start(); err != nil {
		t.Fatal(err)
	}
	defer play.Wait()
	loudest := -96.0
	for range 40 { // up to 2 s of 50 ms windows
		loudest = max(loudest, Level(readN(t, m, hal.SampleRate/20)))
		if loudest > -12 {
			break
		}
	}
	if quiet > -60 || loudest < -12 {
		t.Errorf("silence at %.1f dBFS, the tone at %.1f; want below -60 and above -12", quiet, loudest)
	}
}

func TestFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.wav")
	want := tone(300, 0.3, 30*time.Millisecond)
	f, _ := os.Create(path)
	wav.Encode(f, wav.Format{Rate: hal.SampleRate, Channels: 1}, want)
	f.Close()

	m, err := OpenFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := readN(t, m, len(want)); !slices.Equal(got, want) {
		t.Error("the file's samples changed")
	}
	if n, err := m.Read(t.Context(), make([]int16, 5)); n != 0 || !errors.Is(err, io.EOF) {
		t.Errorf("after the file: %d, %v; want io.EOF", n, err)
	}

	m, _ = OpenFile(path, &FileOptions{ThenSilence: true})
	got := readN(t, m, len(want)+100)
	if !slices.Equal(got[:len(want)], want) || slices.ContainsFunc(got[len(want):], func(s int16) bool { return s != 0 }) {
		t.Error("ThenSilence: want the file, then zeros")
	}
	m.Halt()
	if _, err := m.Read(t.Context(), make([]int16, 5)); !errors.Is(err, hal.ErrHalted) {
		t.Errorf("after Halt: %v", err)
	}

	stereo := filepath.Join(t.TempDir(), "stereo.wav")
	f, _ = os.Create(stereo)
	wav.Encode(f, wav.Format{Rate: 44100, Channels: 2}, []int16{1, 2})
	f.Close()
	if _, err := OpenFile(stereo, nil); err == nil || !strings.Contains(err.Error(), "44100 Hz, 2 channels") || !strings.Contains(err.Error(), "sox") {
		t.Errorf("a 44.1 kHz stereo file: %v; want a refusal saying how to convert it", err)
	}
}

func TestSim(t *testing.T) {
	m := NewSim(&SimOptions{Fast: true})
	say := tone(500, 0.4, 20*time.Millisecond)
	m.Play(say)
	got := readN(t, m, len(say)+50)
	if !slices.Equal(got[:len(say)], say) || slices.ContainsFunc(got[len(say):], func(s int16) bool { return s != 0 }) {
		t.Error("want what was played, then silence")
	}
	m.Halt()
	if _, err := m.Read(t.Context(), got); !errors.Is(err, hal.ErrHalted) {
		t.Errorf("after Halt: %v", err)
	}
}

func TestLevel(t *testing.T) {
	for _, tc := range []struct {
		s    []int16
		want float64
	}{
		{nil, -96}, {make([]int16, 100), -96},
		{tone(1000, 1, 100*time.Millisecond), -3.01},
		{tone(1000, 0.1, 100*time.Millisecond), -23.01},
		{slices.Repeat([]int16{-32768}, 10), 0},
	} {
		if got := Level(tc.s); math.Abs(got-tc.want) > 0.1 {
			t.Errorf("Level = %.2f, want %.2f", got, tc.want)
		}
	}
}
