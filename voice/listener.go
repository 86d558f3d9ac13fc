package voice

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"periph.io/x/conn/v3/gpio"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/mic"
)

// The modes of a Listener: the values of voice.listen that listen.
const (
	ModeVAD    = "vad"    // every utterance
	ModeButton = "button" // what is said while the push-to-talk button is held
	ModeWake   = "wake"   // the utterance after the keyword
)

// ListenerOptions configure a Listener. Zero fields take the defaults noted beside them.
type ListenerOptions struct {
	Mode string    // ModeVAD (default), ModeButton or ModeWake
	VAD  VADConfig // ModeVAD, ModeWake: how utterances are found
	// Button is the push-to-talk pin (ModeButton): a button to ground with the pin pulled up, so
	// pressed reads low. The Listener sets it up as an input with both edges.
	Button gpio.PinIn
	// Spotter hears the keyword (ModeWake); the Listener feeds it every frame and closes it.
	Spotter Spotter
	// WakeWindow is how long after the keyword the next utterance may start (default 8s).
	WakeWindow time.Duration
	// OnSpeech is told that the person started speaking (barge-in): called from the Listener's
	// goroutine, it must return at once.
	OnSpeech func()
	Logger   *slog.Logger
}

// Utterance is one thing the person said.
type Utterance struct {
	Samples    []int16       // 16 kHz mono
	Start, End time.Duration // from the moment listening began
	Cut        bool          // ended by VADConfig.MaxUtterance (or the button held too long)
}

// Duration is how long the utterance's audio lasts.
func (u Utterance) Duration() time.Duration {
	return time.Duration(len(u.Samples)) * time.Second / hal.SampleRate
}

// Spotter hears a keyword in the audio it is fed (see PocketSphinx).
type Spotter interface {
	// Feed gives the next frame; it must not block (a spotter that falls behind drops audio).
	Feed(frame []int16)
	// Spotted delivers a value each time the keyword was heard.
	Spotted() <-chan struct{}
	// Close stops the spotter and waits for what it started.
	Close() error
}

// Listener reads a microphone in 20 ms frames on a goroutine of its own, finds what the person
// says (by voice activity, a button, or a keyword first) and delivers it on Utterances.
type Listener struct {
	mic  hal.Microphone
	opts ListenerOptions
	log  *slog.Logger
	out  chan Utterance

	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	err    error // why the capture ended, if it did on its own
	once   sync.Once
}

// utteranceQueue is how many utterances wait for a slow consumer before the oldest is dropped:
// a person does not queue commands, and a stale one is worse than a lost one.
const utteranceQueue = 2

// Listen starts listening to m. opts may be nil (ModeVAD with the default parameters). Halt
// stops it; the microphone is the caller's to halt.
func Listen(m hal.Microphone, opts *ListenerOptions) (*Listener, error) {
	var o ListenerOptions
	if opts != nil {
		o = *opts
	}
	if o.Mode == "" {
		o.Mode = ModeVAD
	}
	if o.WakeWindow <= 0 {
		o.WakeWindow = 8 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.VAD = o.VAD.WithDefaults()
	if err := o.VAD.Check(); err != nil {
		return nil, fmt.Errorf("voice: %w", err)
	}
	switch o.Mode {
	case ModeVAD:
	case ModeButton:
		if o.Button == nil {
			return nil, errors.New("voice: button mode needs a button pin")
		}
		if err := o.Button.In(gpio.PullUp, gpio.BothEdges); err != nil {
			return nil, fmt.Errorf("voice: button %s: %w", o.Button, err)
		}
	case ModeWake:
		if o.Spotter == nil {
			return nil, errors.New("voice: wake mode needs a keyword spotter")
		}
	default:
		return nil, fmt.Errorf("voice: unknown mode %q (one of %s, %s, %s)", o.Mode, ModeVAD, ModeButton, ModeWake)
	}
	ctx, cancel := context.WithCancel(context.Background())
	l := &Listener{mic: m, opts: o, log: o.Logger.With("component", "listener"), out: make(chan Utterance, utteranceQueue), cancel: cancel}
	var presses <-chan bool
	if o.Mode == ModeButton {
		ch := make(chan bool, 4)
		presses = ch
		l.wg.Add(1)
		go l.watchButton(ctx, ch)
	}
	l.wg.Add(1)
	go l.run(ctx, presses)
	return l, nil
}

// Utterances delivers what was said, in order. It is closed when the Listener stops.
func (l *Listener) Utterances() <-chan Utterance { return l.out }

// Err reports why the capture ended on its own (the microphone failed or its file ended); nil
// while it runs and after Halt.
func (l *Listener) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// String describes the listener: its mode and microphone.
func (l *Listener) String() string { return "listener(" + l.opts.Mode + ", " + l.mic.String() + ")" }

// Halt stops listening and waits for the Listener's goroutines (and the spotter) to end.
func (l *Listener) Halt() error {
	var err error
	l.once.Do(func() {
		l.cancel()
		l.wg.Wait()
		if l.opts.Spotter != nil {
			err = l.opts.Spotter.Close()
		}
	})
	return err
}

// buttonPoll bounds a wait for an edge, so that Halt is noticed: WaitForEdge takes no context.
const buttonPoll = 100 * time.Millisecond

// watchButton reports each change of the button, true for pressed, on ch.
func (l *Listener) watchButton(ctx context.Context, ch chan<- bool) {
	defer l.wg.Done()
	pressed := l.opts.Button.Read() == gpio.Low
	for ctx.Err() == nil {
		if !l.opts.Button.WaitForEdge(buttonPoll) {
			continue
		}
		now := l.opts.Button.Read() == gpio.Low
		if now == pressed {
			continue // a bounce: two edges back to where it was
		}
		pressed = now
		select {
		case ch <- now:
		case <-ctx.Done():
			return
		}
	}
}

// run is the capture loop: it reads frames and turns them into utterances.
func (l *Listener) run(ctx context.Context, presses <-chan bool) {
	defer l.wg.Done()
	defer close(l.out)
	det := NewDetector(l.opts.VAD)
	frame := make([]int16, mic.FrameSamples)
	var (
		pos       int64   // samples read so far
		held      bool    // ModeButton: the button is down
		take      []int16 // ModeButton: what was heard while it was down
		takeStart int64
		armedAt   = int64(-1) // ModeWake: where in the audio the keyword was spotted; -1: not armed
		armedTalk bool        // ModeWake: speech has started since
	)
	window := int64(l.opts.WakeWindow * hal.SampleRate / time.Second)
	maxTake := int(l.opts.VAD.MaxUtterance * hal.SampleRate / time.Second)
	var spotted <-chan struct{}
	if l.opts.Spotter != nil {
		spotted = l.opts.Spotter.Spotted()
	}
	for ctx.Err() == nil {
		// What happened while the frame was being read, before the frame itself.
		for drained := false; !drained; {
			select {
			case down := <-presses:
				if down && !held {
					held, take, takeStart = true, take[:0], pos
					l.speech()
				} else if !down && held {
					held = false
					l.deliver(ctx, Utterance{Samples: append([]int16(nil), take...), Start: sampleOffset(takeStart), End: sampleOffset(pos)})
				}
			case <-spotted:
				armedAt, armedTalk = pos, false
				l.log.Info("heard the wake word")
			default:
				drained = true
			}
		}
		n, err := l.mic.Read(ctx, frame)
		if err != nil {
			if ctx.Err() == nil {
				if !errors.Is(err, io.EOF) {
					l.log.Warn("the microphone stopped", "mic", l.mic.String(), "err", err)
				}
				l.mu.Lock()
				l.err = fmt.Errorf("%s: %w", l.mic, err)
				l.mu.Unlock()
			}
			return
		}
		f := frame[:n]
		pos += int64(n)
		if l.opts.Spotter != nil {
			l.opts.Spotter.Feed(f)
		}
		if l.opts.Mode == ModeButton {
			if held {
				take = append(take, f...)
				if len(take) >= maxTake {
					held = false // held too long: what there is goes, and the rest waits for a new press
					l.deliver(ctx, Utterance{Samples: append([]int16(nil), take...), Start: sampleOffset(takeStart), End: sampleOffset(pos), Cut: true})
				}
			}
			continue
		}
		if armedAt >= 0 && !armedTalk && pos-armedAt > window {
			armedAt = -1 // nobody spoke after the keyword
			l.log.Debug("the wake word's window passed")
		}
		ev, ok := det.Feed(f)
		if !ok {
			continue
		}
		// ModeWake takes only an utterance begun after the keyword was spotted: the keyword's
		// own utterance, and talk before it, are not for the device.
		forUs := l.opts.Mode == ModeVAD || (armedAt >= 0 && ev.Start >= sampleOffset(armedAt))
		switch {
		case !forUs:
		case ev.Kind == SpeechStarted:
			armedTalk = true
			l.speech()
		case ev.Kind == UtteranceEnded:
			armedAt = -1
			l.deliver(ctx, Utterance{Samples: ev.Samples, Start: ev.Start, End: ev.End, Cut: ev.Cut})
		}
	}
}

func (l *Listener) speech() {
	if l.opts.OnSpeech != nil {
		l.opts.OnSpeech()
	}
}

// deliver queues u; when the consumer is behind, the oldest waiting utterance makes room.
func (l *Listener) deliver(ctx context.Context, u Utterance) {
	if len(u.Samples) == 0 {
		return
	}
	for {
		select {
		case l.out <- u:
			return
		case <-ctx.Done():
			return
		default:
		}
		select {
		case old := <-l.out:
			l.log.Warn("dropped an utterance nobody took", "length", old.Duration().Round(time.Millisecond))
		default:
		}
	}
}
