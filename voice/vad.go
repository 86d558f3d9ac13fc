package voice

import (
	"errors"
	"fmt"
	"time"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/mic"
)

// VADConfig are the detector's parameters (voice.vad). The zero value of a field takes its
// default (DefaultVAD).
type VADConfig struct {
	// Threshold is how far above the noise floor, in dB, a frame must be to count as speech.
	Threshold float64
	// MinLevel is the level, in dBFS, a frame must reach to count as speech however quiet the
	// room: a silent room's floor is no reason to hear its hiss.
	MinLevel float64
	// MinSpeech is how long speech must last to start an utterance: shorter is a click or a bump.
	MinSpeech time.Duration
	// Silence is how long a pause must last to end an utterance.
	Silence time.Duration
	// MaxUtterance cuts an utterance that goes on longer (a television, a long monologue).
	MaxUtterance time.Duration
	// PreRoll is how much audio before the detected start is kept: the soft first consonant a
	// level threshold misses.
	PreRoll time.Duration
}

// DefaultVAD are the detector's defaults: tuned on flite and espeak voices over room noise, a
// pause of 700 ms ending a command.
var DefaultVAD = VADConfig{
	Threshold:    12,
	MinLevel:     -50,
	MinSpeech:    120 * time.Millisecond,
	Silence:      700 * time.Millisecond,
	MaxUtterance: 15 * time.Second,
	PreRoll:      300 * time.Millisecond,
}

// WithDefaults returns c with each zero field set from DefaultVAD.
func (c VADConfig) WithDefaults() VADConfig {
	d := DefaultVAD
	if c.Threshold != 0 {
		d.Threshold = c.Threshold
	}
	if c.MinLevel != 0 {
		d.MinLevel = c.MinLevel
	}
	if c.MinSpeech != 0 {
		d.MinSpeech = c.MinSpeech
	}
	if c.Silence != 0 {
		d.Silence = c.Silence
	}
	if c.MaxUtterance != 0 {
		d.MaxUtterance = c.MaxUtterance
	}
	if c.PreRoll != 0 {
		d.PreRoll = c.PreRoll
	}
	return d
}

// Check reports parameters that cannot work together.
func (c VADConfig) Check() error {
	c = c.WithDefaults()
	switch {
	case c.Threshold < 0:
		return fmt.Errorf("threshold %.1f dB: want a positive number of dB above the noise floor", c.Threshold)
	case c.MinLevel > 0 || c.MinLevel < -96:
		return fmt.Errorf("min_level %.1f dBFS: want -96..0", c.MinLevel)
	case c.MinSpeech < 0 || c.Silence < 0 || c.PreRoll < 0:
		return errors.New("min_speech, silence and pre_roll must not be negative")
	case c.MaxUtterance <= c.MinSpeech:
		return fmt.Errorf("max_utterance %v must be longer than min_speech %v", c.MaxUtterance, c.MinSpeech)
	}
	return nil
}

// EventKind says what a Detector noticed.
type EventKind int

const (
	// SpeechStarted: speech has gone on for MinSpeech; an utterance is under way.
	SpeechStarted EventKind = iota + 1
	// UtteranceEnded: the utterance ended (a pause of Silence, or MaxUtterance); Event.Samples
	// holds it.
	UtteranceEnded
)

// Event is what a frame made the Detector notice.
type Event struct {
	Kind EventKind
	// Start and End are the speech's first and last instant, as offsets from the detector's
	// first sample. End is set for UtteranceEnded only.
	Start, End time.Duration
	// Samples is the utterance: from PreRoll before Start to a little after End.
	Samples []int16
	// Cut reports an utterance ended by MaxUtterance rather than a pause.
	Cut bool
}

type vadState int

const (
	quiet    vadState = iota
	onset             // speech heard, shorter than MinSpeech so far
	speaking          // an utterance is under way
)

// Detector finds utterances in a stream of frames. The zero value is not ready: use NewDetector.
type Detector struct {
	c         VADConfig
	floor     float64 // the noise floor in dBFS, following the quiet
	haveFloor bool
	state     vadState
	pos       int64 // samples fed so far

	pre      []int16 // the last PreRoll of audio, while quiet
	cur      []int16 // the utterance so far, from its pre-roll on
	curStart int64   // the sample cur[0] is
	start    int64   // the first speech sample
	lastEnd  int64   // the end of the last speech frame
	run      int     // frames of speech (onset) or of silence (speaking) in a row
	gap      int     // frames of silence during an onset
}

// NewDetector returns a detector with c's parameters (zero fields take DefaultVAD's).
func NewDetector(c VADConfig) *Detector {
	return &Detector{c: c.WithDefaults()}
}

// Floor returns the noise floor the detector has learnt, in dBFS.
func (d *Detector) Floor() float64 { return d.floor }

// sampleOffset converts a sample count to time.
func sampleOffset(n int64) time.Duration { return time.Duration(n) * time.Second / hal.SampleRate }

func frames(d time.Duration) int {
	return int((d + mic.FrameDuration - 1) / mic.FrameDuration)
}

// onsetGap is how many quiet frames an onset may hold (the stop of a "t") before it is dropped.
const onsetGap = 3

// tail is how much audio after the last speech frame an utterance keeps: the fading end of a
// word that the threshold cut.
const tail = 100 * time.Millisecond

// Feed takes the next frame (any length; 20 ms, mic.FrameSamples, is what the defaults are
// tuned for) and returns what it made the detector notice, if anything.
func (d *Detector) Feed(frame []int16) (Event, bool) {
	level := mic.Level(frame)
	start := d.pos
	d.pos += int64(len(frame))
	if !d.haveFloor {
		d.floor, d.haveFloor = level, true
	}
	speech := level >= max(d.floor+d.c.Threshold, d.c.MinLevel)

	switch d.state {
	case quiet:
		if !speech {
			d.learn(level)
			d.keepPreRoll(frame)
			return Event{}, false
		}
		d.state, d.run, d.gap = onset, 1, 0
		d.start, d.lastEnd = start, d.pos
		d.curStart = start - int64(len(d.pre))
		d.cur = append(append(d.cur[:0], d.pre...), frame...)
		d.pre = d.pre[:0]
		if d.run >= frames(d.c.MinSpeech) {
			d.state = speaking
			return Event{Kind: SpeechStarted, Start: sampleOffset(d.start)}, true
		}
	case onset:
		d.cur = append(d.cur, frame...)
		if !speech {
			if d.gap++; d.gap > onsetGap {
				// A click, not speech: back to quiet, its audio becoming pre-roll.
				d.state = quiet
				d.keepPreRoll(d.cur)
				d.cur = d.cur[:0]
			}
			return Event{}, false
		}
		d.run++
		d.lastEnd = d.pos
		if d.run >= frames(d.c.MinSpeech) {
			d.state, d.run = speaking, 0
			return Event{Kind: SpeechStarted, Start: sampleOffset(d.start)}, true
		}
	case speaking:
		d.cur = append(d.cur, frame...)
		if speech {
			d.run = 0
			d.lastEnd = d.pos
		} else {
			d.run++
		}
		if d.run >= frames(d.c.Silence) {
			return d.end(false), true
		}
		if sampleOffset(d.pos-d.start) >= d.c.MaxUtterance {
			return d.end(true), true
		}
	}
	return Event{}, false
}

// end closes the utterance under way.
func (d *Detector) end(cut bool) Event {
	last := d.lastEnd
	if cut {
		last = d.pos
	}
	stop := min(last+int64(tail*hal.SampleRate/time.Second), d.pos)
	samples := append([]int16(nil), d.cur[:stop-d.curStart]...)
	e := Event{Kind: UtteranceEnded, Start: sampleOffset(d.start), End: sampleOffset(last), Samples: samples, Cut: cut}
	d.state, d.run = quiet, 0
	d.cur = d.cur[:0]
	if cap(d.cur) > 4*hal.SampleRate {
		d.cur = nil // a long utterance should not pin its buffer
	}
	return e
}

// learn moves the noise floor toward level: down at once (the room got quieter, or the first
// frames were a door closing), up slowly (a fan starting), so that speech does not lift it.
func (d *Detector) learn(level float64) {
	if level < d.floor {
		d.floor = level
		return
	}
	d.floor += (level - d.floor) * floorRise
}

// floorRise is the share of the way to a louder level the floor goes each frame: with 20 ms
// frames, most of the way in about 2 s.
const floorRise = 0.02

// keepPreRoll keeps the newest PreRoll of samples.
func (d *Detector) keepPreRoll(s []int16) {
	keep := int(d.c.PreRoll * hal.SampleRate / time.Second)
	d.pre = append(d.pre, s...)
	if over := len(d.pre) - keep; over > 0 {
		d.pre = d.pre[:copy(d.pre, d.pre[over:])]
	}
}
