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
