package flite

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/internal/testing/pulsetest"
	"github.com/devicectl/devicectl/internal/wav"
)

// Rate is the sample rate of what WAV and Samples return: the microphone's, in samples per second.
const Rate = hal.SampleRate

// WAV writes what flite says of text, in its default voice, as a 16 kHz mono 16-bit WAV file in
// a directory of the test's own, and returns the file's path.
func WAV(t testing.TB, text string) string {
	t.Helper()
	return Say(t, Speech{Text: text})
}

// Speech is what Say has flite say, and how.
type Speech struct {
	Text  string
	Voice string // flite's -voice (slt, rms, kal, ...); "" is its default
	// Lead and Trail are the seconds of silence before and after the words, as a voice activity
	// detector cuts an utterance, or as a microphone hears a pause.
	Lead, Trail float64
}

// Say writes sp as a 16 kHz mono 16-bit WAV file in a directory of the test's own and returns
// the file's path.
func Say(t testing.TB, sp Speech) string {
	t.Helper()
	flite := pulsetest.Need(t, "flite", "flite")
	sox := pulsetest.Need(t, "sox", "sox")
	dir := t.TempDir()
	raw, path := filepath.Join(dir, "flite.wav"), filepath.Join(dir, "said.wav")
	args := []string{"-t", sp.Text, "-o", raw}
	if sp.Voice != "" {
		args = append([]string{"-voice", sp.Voice}, args...)
	}
	if out, err := exec.Command(flite, args...).CombinedOutput(); err != nil {
		t.Fatalf("flite: %v %s", err, out)
	}
	args = []string{raw, "-r", strconv.Itoa(Rate), "-c", "1", "-b", "16", path}
	if sp.Lead > 0 || sp.Trail > 0 {
		args = append(args, "pad", seconds(sp.Lead), seconds(sp.Trail))
	}
	if out, err := exec.Command(sox, args...).CombinedOutput(); err != nil {
		t.Fatalf("sox: %v %s", err, out)
	}
	return path
}

func seconds(s float64) string { return strconv.FormatFloat(s, 'f', 3, 64) }

// Samples returns what flite says of text as 16 kHz mono samples.
func Samples(t testing.TB, text string) []int16 {
	t.Helper()
	s, err := open(t, WAV(t, text)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// open reads the header of the WAV file at path; the file is closed when the test ends.
func open(t testing.TB, path string) *wav.Reader {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	r, err := wav.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
