package voice

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/mic"
	"github.com/devicectl/devicectl/internal/testing/flite"
)

func samplesOf(d time.Duration) int { return int(d * hal.SampleRate / time.Second) }

// room is background noise at level dBFS (white noise's RMS) for d.
func room(r *rand.Rand, level float64, d time.Duration) []int16 {
	amp := 32768 * math.Pow(10, level/20) * math.Sqrt(3) // uniform noise: RMS = amp/sqrt(3)
	s := make([]int16, samplesOf(d))
	for i := range s {
		s[i] = int16((r.Float64()*2 - 1) * amp)
	}
	return s
}

// speechLike is syllables: 160 ms tones of changing pitch, each with a 40 ms dip, at about
// level dBFS, over the room's noise; like speech, it is loud, then briefly less so, repeatedly.
func speechLike(r *rand.Rand, level float64, d time.Duration, noise []int16) []int16 {
	amp := 32768 * math.Pow(10, level/20) * math.Sqrt2
	s := make([]int16, samplesOf(d))
	syl := samplesOf(200 * time.Millisecond)
	for i := range s {
		k := i % syl
		f := 150 + 100*float64(i/syl%3)
		a := amp
		if k >= samplesOf(160*time.Millisecond) {
			a = amp / 8 // the dip between syllables: quieter, not silent
		}
		v := a*math.Sin(2*math.Pi*f*float64(i)/hal.SampleRate) + float64(noise[i%len(noise)])
		s[i] = int16(max(min(v, 32767), -32768))
	}
	return s
}

func feedAll(d *Detector, audio []int16) []Event {
	var events []Event
	for i := 0; i+mic.FrameSamples <= len(audio); i += mic.FrameSamples {
		if e, ok := d.Feed(audio[i : i+mic.FrameSamples]); ok {
			events = append(events, e)
		}
	}
	return events
}

func near(got, want time.Duration) bool {
	return (got - want).Abs() <= 100*time.Millisecond
}

// Two utterances in a noisy room are found, each within 100 ms of where it starts and ends, with
// a start cue in between; the pause between them is not an utterance.
func TestDetectorFindsUtterances(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	noise := room(r, -55, 5*time.Second)
	var audio []int16
	add := func(s []int16) time.Duration {
		at := time.Duration(len(audio)) * time.Second / hal.SampleRate
		audio = append(audio, s...)
		return at
	}
	add(room(r, -55, time.Second))
	s1 := add(speechLike(r, -20, 1200*time.Millisecond, noise))
	e1 := add(room(r, -55, 1500*time.Millisecond))
	s2 := add(speechLike(r, -26, 800*time.Millisecond, noise))
	e2 := add(room(r, -55, time.Second))

	d := NewDetector(VADConfig{})
	events := feedAll(d, audio)
	kinds := make([]EventKind, len(events))
	for i, e := range events {
		kinds[i] = e.Kind
	}
	if len(events) != 4 || events[0].Kind != SpeechStarted || events[1].Kind != UtteranceEnded || events[2].Kind != SpeechStarted || events[3].Kind != UtteranceEnded {
		t.Fatalf("events %v; want start, end, start, end", kinds)
	}
	for i, want := range [][2]time.Duration{{s1, e1}, {s2, e2}} {
		start, end := events[2*i], events[2*i+1]
		if !near(start.Start, want[0]) || !near(end.Start, want[0]) || !near(end.End, want[1]) {
			t.Errorf("utterance %d: started %v (cue at %v), ended %v; want %v to %v", i+1, end.Start, start.Start, end.End, want[0], want[1])
		}
		// Its samples run from the pre-roll before the start to just after the end.
		dur := time.Duration(len(end.Samples)) * time.Second / hal.SampleRate
		if wantDur := want[1] - want[0] + DefaultVAD.PreRoll + tail; (dur-wantDur).Abs() > 150*time.Millisecond || end.Cut {
			t.Errorf("utterance %d: %v of samples (cut %v), want about %v", i+1, dur, end.Cut, wantDur)
		}
	}
	if f := d.Floor(); f > -50 || f < -60 {
		t.Errorf("noise floor %.1f dBFS, want about -55", f)
	}
}

// A click shorter than MinSpeech, and a fan that slowly gets louder, are not speech.
func TestDetectorIgnoresClicksAndRisingNoise(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	audio := room(r, -60, time.Second)
	audio = append(audio, room(r, -15, 60*time.Millisecond)...) // a click
	audio = append(audio, room(r, -60, time.Second)...)
	for lvl := -60.0; lvl < -35; lvl += 0.5 { // the fan, over 5 s
		audio = append(audio, room(r, lvl, 100*time.Millisecond)...)
	}
	if events := feedAll(NewDetector(VADConfig{}), audio); len(events) != 0 {
		t.Errorf("events %+v; want none", events)
	}
}

// Speech that does not stop is cut at MaxUtterance, marked so, and the next utterance follows.
func TestDetectorCapsLength(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	noise := room(r, -60, time.Second)
	audio := append(room(r, -60, 500*time.Millisecond), speechLike(r, -20, 5*time.Second, noise)...)
	audio = append(audio, room(r, -60, time.Second)...)
	events := feedAll(NewDetector(VADConfig{MaxUtterance: 2 * time.Second}), audio)
	var ended []Event
	for _, e := range events {
		if e.Kind == UtteranceEnded {
			ended = append(ended, e)
		}
	}
	if len(ended) < 2 || !ended[0].Cut || ended[len(ended)-1].Cut {
		t.Fatalf("utterances %d (first cut %v); want the first cut at 2 s and the last ended by the pause", len(ended), len(ended) > 0 && ended[0].Cut)
	}
	if got := ended[0].End - ended[0].Start; (got - 2*time.Second).Abs() > 100*time.Millisecond {
		t.Errorf("the cut utterance lasted %v, want 2s", got)
	}
}

// A real voice: flite says a command in a quiet room; the utterance is where the speech is.
func TestDetectorOnFlite(t *testing.T) {
	said := flite.Samples(t, "set the volume to thirty")
	// Where the speech is, measured apart from the detector: the first and last 20 ms window above
	// -40 dBFS.
	first, last := -1, -1
	for i := 0; i+mic.FrameSamples <= len(said); i += mic.FrameSamples {
		if mic.Level(said[i:i+mic.FrameSamples]) > -40 {
			if first < 0 {
				first = i
			}
			last = i + mic.FrameSamples
		}
	}
	r := rand.New(rand.NewPCG(7, 8))
	lead := room(r, -65, time.Second)
	audio := append(append(lead, said...), room(r, -65, time.Second)...)
	events := feedAll(NewDetector(VADConfig{}), audio)
	if len(events) != 2 || events[1].Kind != UtteranceEnded {
		t.Fatalf("events %+v; want one utterance", events)
	}
	at := func(i int) time.Duration { return time.Duration(len(lead)+i) * time.Second / hal.SampleRate }
	if u := events[1]; !near(u.Start, at(first)) || !near(u.End, at(last)) {
		t.Errorf("utterance %v to %v; the speech is %v to %v", u.Start, u.End, at(first), at(last))
	}
}

func TestVADCheck(t *testing.T) {
	if err := (VADConfig{}).Check(); err != nil {
		t.Errorf("defaults: %v", err)
	}
	for _, c := range []VADConfig{{Threshold: -1}, {MinLevel: 3}, {Silence: -time.Second}, {MaxUtterance: 100 * time.Millisecond}} {
		if err := c.Check(); err == nil {
			t.Errorf("%+v passed", c)
		}
	}
}
