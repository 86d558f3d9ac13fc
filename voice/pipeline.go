package voice

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/protocol"
)

// Server is the agent server as the device reaches it; *device.Agent is one.
type Server interface {
	UserText(ctx context.Context, p protocol.UserTextParams) (protocol.UserResult, error)
	UserAudio(ctx context.Context, samples []int16, lang string) (protocol.UserResult, error)
	Interrupt() error
}

var _ Server = (*device.Agent)(nil)

// Mouth is the device's own voice, which barge-in silences; speech.Narrator is one.
type Mouth interface {
	// Interrupt silences the reply being said and the rest of it, and reports whether there was
	// anything to silence.
	Interrupt() bool
	// Resume lets the next reply be said: the server took what the person said next.
	Resume()
	// Say says the device's own words.
	Say(text string)
}

// PipelineOptions configure a Pipeline.
type PipelineOptions struct {
	Server Server
	// Transcriber turns utterances into text on the device (mcp/user/text); nil: the server
	// transcribes them (mcp/user/audio).
	Transcriber Transcriber
	Mouth       Mouth  // nil: the device does not speak
	Lang        string // the language spoken, e.g. en or zh
	// Timeout bounds the work on one utterance: transcribing and sending (default 60s).
	Timeout time.Duration
	Logger  *slog.Logger
}

// Pipeline sends what the Listener hears to the server, and acts on the person speaking over a
// reply (barge-in): the reply's speech stops and the server is told to stop streaming it.
type Pipeline struct {
	o   PipelineOptions
	log *slog.Logger
}

// NewPipeline returns a Pipeline; Run drives it. Options.Server is required.
func NewPipeline(opts PipelineOptions) *Pipeline {
	if opts.Timeout <= 0 {
		opts.Timeout = 60 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Pipeline{o: opts, log: opts.Logger.With("component", "voice")}
}

// SpeechStarted is the Listener's OnSpeech: the person started speaking. If the device was
// speaking, it stops at once and the server is told (mcp/user/interrupt). It returns at once.
func (p *Pipeline) SpeechStarted() {
	if p.o.Mouth == nil || !p.o.Mouth.Interrupt() {
		return
	}
	err := p.o.Server.Interrupt()
	p.log.Info("spoken over: stopped speaking the reply", "server_told", err == nil)
	if err != nil && !errors.Is(err, device.ErrNoVoice) {
		p.log.Debug("could not tell the server of the interruption", "err", err)
	}
}

// Run sends each utterance to the server, one at a time, until utterances is closed or ctx is
// done.
func (p *Pipeline) Run(ctx context.Context, utterances <-chan Utterance) {
	for {
		select {
		case u, ok := <-utterances:
			if !ok {
				return
			}
			p.Handle(ctx, u)
		case <-ctx.Done():
			return
		}
	}
}

// Handle sends one utterance: as text when the device transcribes, else as audio.
func (p *Pipeline) Handle(ctx context.Context, u Utterance) {
	ctx, cancel := context.WithTimeout(ctx, p.o.Timeout)
	defer cancel()
	start := time.Now()
	var (
		res protocol.UserResult
		err error
	)
	if p.o.Transcriber != nil {
		var text string
		text, err = p.o.Transcriber.Transcribe(ctx, u.Samples, p.o.Lang)
		if err != nil {
			p.log.Warn("speech to text failed; what was said is dropped", "err", err, "length", u.Duration().Round(time.Millisecond))
			return
		}
		if text == "" {
			p.log.Info("heard nothing understandable", "length", u.Duration().Round(time.Millisecond))
			p.didNotCatch()
			return
		}
		p.log.Info("heard", "text", text, "stt", time.Since(start).Round(time.Millisecond))
		res, err = p.o.Server.UserText(ctx, protocol.UserTextParams{Text: text, Lang: p.o.Lang, Source: protocol.SourceVoice})
	} else {
		res, err = p.o.Server.UserAudio(ctx, u.Samples, p.o.Lang)
		if err == nil && res.Text != "" {
			p.log.Info("heard", "text", res.Text, "by", "server", "took", time.Since(start).Round(time.Millisecond))
		}
	}
	switch {
	case errors.Is(err, device.ErrNoVoice):
		// The agent said so once; nothing more to say per utterance.
		p.log.Debug("what was said is not sent: no voice on this server")
	case errors.Is(err, device.ErrNotRegistered):
		p.log.Warn("not connected to the agent server: what was said is dropped", "length", u.Duration().Round(time.Millisecond))
	case err != nil:
		p.log.Warn("sending what was said failed", "err", err)
	case res.Status == protocol.StatusEmpty:
		p.log.Info("the server heard nothing understandable", "length", u.Duration().Round(time.Millisecond))
		p.didNotCatch()
	default:
		if p.o.Mouth != nil {
			p.o.Mouth.Resume()
		}
		p.log.Debug("the server took what was said", "turn_id", res.TurnID, "status", res.Status)
	}
}

// didNotCatch tells the person their words were not understood, in their language.
func (p *Pipeline) didNotCatch() {
	if p.o.Mouth == nil {
		return
	}
	if strings.HasPrefix(p.o.Lang, "zh") {
		p.o.Mouth.Say("抱歉，我没听清。")
		return
	}
	p.o.Mouth.Say("Sorry, I didn't catch that.")
}
