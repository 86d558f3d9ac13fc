package simdevice

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"periph.io/x/conn/v3/gpio"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/mic"
	"github.com/devicectl/devicectl/voice"
)

// HearOptions make the simulated device hear: `devicectl sim --voice` (the laptop's default
// PulseAudio source) and --voice-input FILE.wav (a file as the microphone).
type HearOptions struct {
	Mic   mic.Config
	VAD   voice.VADConfig
	Mouth voice.Mouth // the device's speech, silenced when the person speaks over it; nil: none
	Lang  string      // what is spoken, e.g. en
	// Button, when set, is a push-to-talk pin (voice.ModeButton); nil listens for every utterance.
	Button gpio.PinIn
	Logger *slog.Logger
}

// hearing is the microphone, its listener and the pipeline to the server.
type hearing struct {
	mic    hal.Microphone
	l      *voice.Listener
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Hear starts listening: what the microphone hears goes to the server (mcp/user/audio), which
// transcribes it and runs a turn, as for a board's `devicectl run` with voice.listen vad. Close
// stops it.
func (d *Device) Hear(ctx context.Context, o *HearOptions) error {
	if d.hearing != nil {
		return errors.New("simdevice: already hearing")
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m, err := mic.Open(ctx, o.Mic, log)
	if err != nil {
		return err
	}
	pipe := voice.NewPipeline(voice.PipelineOptions{Server: d.agent, Mouth: o.Mouth, Lang: o.Lang, Logger: log})
	opts := &voice.ListenerOptions{Mode: voice.ModeVAD, VAD: o.VAD, OnSpeech: pipe.SpeechStarted, Logger: log}
	if o.Button != nil {
		opts.Mode, opts.Button = voice.ModeButton, o.Button
	}
	l, err := voice.Listen(m, opts)
	if err != nil {
		return errors.Join(err, m.Halt())
	}
	h := &hearing{mic: m, l: l}
	hctx, cancel := context.WithCancel(ctx)
	h.cancel = cancel
	h.wg.Go(func() { pipe.Run(hctx, l.Utterances()) })
	d.hearing = h
	log.Info("listening", "microphone", m.String(), "lang", o.Lang)
	return nil
}

// stop stops listening and waits for the pipeline; nil does nothing.
func (h *hearing) stop() {
	if h == nil {
		return
	}
	h.l.Halt()
	h.cancel()
	h.wg.Wait()
	h.mic.Halt()
}
