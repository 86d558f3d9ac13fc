package daemon

import (
	"context"
	"reflect"
	"sync"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/hostbus"
	"github.com/devicectl/devicectl/hal/mic"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/hardware"
	"github.com/devicectl/devicectl/voice"
)

// hearing is the device's voice input: the microphone, the listener on it, and the pipeline
// that sends what it hears to the server. It is built at start-up from the voice section.
type hearing struct {
	mic    hal.Microphone
	buses  *hostbus.Buses // the button's GPIO, if any
	l      *voice.Listener
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// startHearing opens the microphone and starts listening when voice.listen is not off; nil when
// it is. Errors name the key to fix.
func (d *Daemon) startHearing(ctx context.Context, c *config.Config) (*hearing, error) {
	if c.Voice.Listen == config.ListenOff {
		return nil, nil
	}
	log := d.log
	mc := c.Hardware.Microphone.Mic()
	mode := c.Voice.Listen
	if c.Hardware.Mode == "sim" {
		mc = mic.Config{Driver: mic.DriverSim}
		if mode == config.ListenButton {
			mode = config.ListenVAD // no button to press in a simulation
			log.Info("simulated hardware has no push-to-talk button; listening for every utterance")
		}
	}
	m, err := mic.Open(ctx, mc, log)
	if err != nil {
		return nil, &hardware.PartError{Key: "hardware.microphone", Err: err}
	}
	h := &hearing{mic: m}
	ok := false
	defer func() {
		if !ok {
			h.stop()
		}
	}()
	opts := &voice.ListenerOptions{Mode: mode, VAD: c.Voice.VAD, Logger: log}
	switch mode {
	case config.ListenButton:
		h.buses = &hostbus.Buses{}
		pin, err := h.buses.Pin(c.Voice.Button)
		if err != nil {
			return nil, &config.Error{Key: "voice.button", Err: err}
		}
		opts.Button = pin
	case config.ListenWake:
		sp, err := newSpotter(c, log)
		if err != nil {
			return nil, err
		}
		opts.Spotter = sp
	}
	stt, err := transcriber(c, log)
	if err != nil {
		if opts.Spotter != nil {
			opts.Spotter.Close()
		}
		return nil, err
	}
	pipe := voice.NewPipeline(voice.PipelineOptions{Server: d.agent, Transcriber: stt, Mouth: mouth{d}, Lang: c.VoiceLang(), Logger: log})
	opts.OnSpeech = pipe.SpeechStarted
	if h.l, err = voice.Listen(m, opts); err != nil {
		if opts.Spotter != nil {
			opts.Spotter.Close()
		}
		return nil, &config.Error{Key: "voice", Err: err}
	}
	hctx, cancel := context.WithCancel(ctx)
	h.cancel = cancel
	h.wg.Go(func() { pipe.Run(hctx, h.l.Utterances()) })
	ok = true
	log.Info("listening", "listen", mode, "microphone", m.String(), "stt", c.Voice.STT, "lang", c.VoiceLang())
	return h, nil
}

// stop stops listening and waits for the listener and the pipeline, then halts the microphone.
func (h *hearing) stop() {
	if h == nil {
		return
	}
	if h.l != nil {
		h.l.Halt()
	}
	if h.cancel != nil {
		h.cancel()
	}
	h.wg.Wait()
	h.mic.Halt()
	if h.buses != nil {
		h.buses.Close()
	}
}

// mouth is the speech in force, for barge-in: a reload may have replaced it.
type mouth struct{ d *Daemon }

func (m mouth) voice() voice.Mouth {
	if p := m.d.cur.Load(); p != nil && p.hw.Speech != nil {
		if v, ok := p.hw.Speech.(voice.Mouth); ok {
			return v
		}
	}
	return nil
}

func (m mouth) Interrupt() bool {
	if v := m.voice(); v != nil {
		return v.Interrupt()
	}
	return false
}

func (m mouth) Resume() {
	if v := m.voice(); v != nil {
		v.Resume()
	}
}

func (m mouth) Say(text string) {
	if v := m.voice(); v != nil {
		v.Say(text)
	}
}

// voiceChanged reports whether a reload changes what the device hears with; that takes a restart.
func voiceChanged(old, c *config.Config) bool {
	return !reflect.DeepEqual(old.Voice, c.Voice) || !reflect.DeepEqual(old.Hardware.Microphone, c.Hardware.Microphone)
}
