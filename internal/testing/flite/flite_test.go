package flite

import (
	"os"
	"testing"
	"time"

	"github.com/devicectl/devicectl/internal/testing/leakcheck"
)

// TestMain fails the package if a test leaves goroutines behind.
func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m)) }

// A short sentence comes back as a 16 kHz mono file of about a second, with sound in it.
func TestSamples(t *testing.T) {
	r := open(t, WAV(t, "set the volume to thirty"))
	if r.Rate != Rate || r.Channels != 1 {
		t.Errorf("format %+v, want %d Hz mono", r.Format, Rate)
	}
	s := Samples(t, "set the volume to thirty")
	if d := time.Duration(len(s)) * time.Second / Rate; d < 500*time.Millisecond || d > 5*time.Second {
		t.Errorf("%v of speech for five words", d)
	}
	var loud int
	for _, v := range s {
		if v > 3000 || v < -3000 {
			loud++
		}
	}
	if loud < len(s)/100 {
		t.Errorf("%d of %d samples above 3000: no speech in it", loud, len(s))
	}
}

// Silence asked for before and after the words lengthens the file by as much, and a voice of
// flite's own is taken.
func TestSayPads(t *testing.T) {
	plain := open(t, Say(t, Speech{Text: "thirty", Voice: "slt"}))
	padded := open(t, Say(t, Speech{Text: "thirty", Voice: "slt", Lead: 0.5, Trail: 0.25}))
	a, err := plain.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	b, err := padded.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(b)-len(a), Rate*3/4; got < want-Rate/100 || got > want+Rate/100 {
		t.Errorf("padding added %d samples, want about %d", got, want)
	}
	for i, v := range b[:Rate/2-Rate/100] {
		if v != 0 {
			t.Fatalf("sample %d of the half second of lead is %d, want silence", i, v)
		}
	}
}
