package hub

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/transport"
)

// This file is what a person says to a device (VOICE.md): mcp/user/text, mcp/user/audio and
// mcp/user/interrupt, beyond seed 002. The read loop checks a request and queues it; one worker
// per line transcribes the audio and runs the turns in order, so a device has one turn at a
// time and its session's history stays in the order things were said.

// Defaults of Options.MaxUtterance, Options.MaxText, Options.UserQueue and
// Options.TranscribeTimeout.
const (
	DefaultMaxUtterance      = protocol.MaxUtterance
	DefaultMaxText           = 64 << 10
	DefaultUserQueue         = 4
	DefaultTranscribeTimeout = 30 * time.Second
)

// Listener takes what people say to devices. The hub calls it from each line's worker, one
// request of a line at a time.
type Listener interface {
	// Transcribe turns one utterance from the device mac into text; "" when nothing was
	// understood. Its error is answered -32000 with the error as data.details: it should name
	// the engine.
	Transcribe(ctx context.Context, mac string, u Utterance) (string, error)
	// Turn runs a turn for the device on what was said and returns when the turn is over. ctx
	// ends on mcp/user/interrupt (ErrInterrupted is its cause), when the line ends or the hub
	// closes.
	Turn(ctx context.Context, t UserTurn)
}

// Utterance is one mcp/user/audio's audio.
type Utterance struct {
	Samples []int16 // mono
	Rate    int     // samples per second
	Lang    string  // as the device said; "" unknown
}

// UserTurn is what a person said to a device, to run a turn on.
type UserTurn struct {
	MAC    string
	ID     string // the turn_id the device was answered
	Text   string
	Lang   string
	Source string // protocol.SourceVoice when heard (by the device or, for audio, the server), else what the device said
}

// ErrInterrupted is the cause of a turn's context when the device sent mcp/user/interrupt.
var ErrInterrupted = errors.New("hub: the person spoke over the reply (mcp/user/interrupt)")

type userJob struct {
	id    json.RawMessage
	mac   string
	turn  UserTurn
	audio *Utterance // nil for text
}

// features is what the registration answer lists: nil without a Listener.
func (h *Hub) features() []string {
	if h.opts.Listener == nil {
		return nil
	}
	return []string{protocol.FeatureUserText, protocol.FeatureUserAudio}
}

// maxAudioBase64 is the longest audio member an utterance of MaxUtterance takes.
func (h *Hub) maxAudioBase64() int {
	samples := int(h.opts.MaxUtterance / time.Second * protocol.AudioRate)
	return base64.StdEncoding.EncodedLen(2 * samples)
}

// user handles a request or notification of the methods above; it reports false for any other
// method. It runs in the read loop: it only checks and queues.
func (l *line) user(m *transport.Message) bool {
	switch m.Method {
	case protocol.MethodUserText, protocol.MethodUserAudio, protocol.MethodUserInterrupt:
	default:
		return false
	}
	h := l.h
	if h.opts.Listener == nil {
		return false // a seed-002 server: -32601, or ignored without an id
	}
	if m.Method == protocol.MethodUserInterrupt {
		l.interrupt()
		if m.ID != nil {
			l.writeResult(m.ID, struct{}{})
		}
		return true
	}
	if m.ID == nil {
		h.log.Debug("a user request sent as a notification is ignored: it needs an id for its answer", "remote", l.remote, "method", m.Method)
		return true
	}
	mac := l.mac()
	if mac == "" {
		l.writeError(m.ID, protocol.CodeInvalidRequest, "Invalid Request", "register first (mcp/registerTools): what a person says goes to a registered device's turn")
		return true
	}
	j := userJob{id: m.ID, mac: mac}
	var details string
	if m.Method == protocol.MethodUserText {
		details = l.parseText(m.Params, &j)
	} else {
		details = l.parseAudio(m.Params, &j)
	}
	if details != "" {
		h.log.Info("user request refused", "mac", mac, "method", m.Method, "reason", details)
		l.writeError(m.ID, protocol.CodeInvalidParams, "Invalid params", details)
		return true
	}
	l.umu.Lock()
	full := l.waiting == h.opts.UserQueue
	if !full {
		l.waiting++
	}
	l.umu.Unlock()
	if full {
		details = fmt.Sprintf("this device already has %d request(s) waiting to be heard or answered, the most it may; say it again when the reply is over", h.opts.UserQueue)
		h.log.Warn("user request refused: too many waiting", "mac", mac, "method", m.Method, "waiting", h.opts.UserQueue)
		l.writeError(m.ID, protocol.CodeBusy, "Busy", details)
		return true
	}
	j.turn.ID = newTurnID()
	if j.audio == nil {
		// Answered before the job is queued: the turn's messages must not overtake the answer.
		l.writeResult(m.ID, protocol.UserResult{Status: protocol.StatusAccepted, TurnID: j.turn.ID})
		h.heard(l, j.turn)
	}
	l.queue(j)
	return true
}

// queue hands j to the line's worker, starting one if none runs. It is called by the read loop,
// whose goroutine the hub's WaitGroup counts: the worker can be added to it.
func (l *line) queue(j userJob) {
	l.umu.Lock()
	l.userq = append(l.userq, j)
	start := !l.working
	l.working = true
	l.umu.Unlock()
	if start {
		l.h.wg.Go(l.userLoop)
	}
}

func (l *line) parseText(raw json.RawMessage, j *userJob) string {
	var p protocol.UserTextParams
	if len(raw) == 0 || raw[0] != '{' {
		return `params must be an object: {"text": "...", "lang": "en", "source": "voice"}`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return "params: " + err.Error()
	}
	text := strings.TrimSpace(p.Text)
	switch max := l.h.opts.MaxText; {
	case text == "":
		return "text is empty: send what the person said"
	case len(text) > max:
		return fmt.Sprintf("text is %d bytes: at most %d are taken (agent.limits.message_bytes)", len(text), max)
	case !utf8.ValidString(text):
		return "text is not valid UTF-8"
	}
	j.turn = UserTurn{MAC: j.mac, Text: text, Lang: p.Lang, Source: p.Source}
	return ""
}

func (l *line) parseAudio(raw json.RawMessage, j *userJob) string {
	h := l.h
	if len(raw) == 0 || raw[0] != '{' {
		return `params must be an object: {"format": "pcm_s16le", "rate": 16000, "channels": 1, "audio": "<base64>", "lang": "en"}`
	}
	// The line's read limit holds the audio to about what an utterance of MaxUtterance takes, so
	// decoding it all before checking its length costs no more than the frame did.
	var p protocol.UserAudioParams
	if err := json.Unmarshal(raw, &p); err != nil {
		var notBase64 base64.CorruptInputError
		if errors.As(err, &notBase64) {
			return "audio is not base64: " + err.Error()
		}
		return "params: " + err.Error()
	}
	pcm := p.Audio
	switch max := int(h.opts.MaxUtterance / time.Second * protocol.AudioRate); {
	case p.Format != protocol.AudioFormat:
		return fmt.Sprintf("format %q is not taken: send %q (signed 16-bit little-endian PCM)", p.Format, protocol.AudioFormat)
	case p.Rate != protocol.AudioRate:
		return fmt.Sprintf("rate %d is not taken: send %d samples per second", p.Rate, protocol.AudioRate)
	case p.Channels != 1:
		return fmt.Sprintf("channels %d is not taken: send mono (1)", p.Channels)
	case len(pcm)/2 > max:
		return fmt.Sprintf("the audio is about %d samples: an utterance may be at most %s (%d samples)", len(pcm)/2, h.opts.MaxUtterance, max)
	case len(pcm) == 0:
		return "audio is empty: send one utterance"
	case len(pcm)%2 != 0:
		return fmt.Sprintf("audio is %d bytes: 16-bit samples take an even number", len(pcm))
	}
	samples := make([]int16, len(pcm)/2)
	for i := range samples {
		samples[i] = int16(binary.LittleEndian.Uint16(pcm[2*i:]))
	}
	j.audio = &Utterance{Samples: samples, Rate: p.Rate, Lang: p.Lang}
	j.turn = UserTurn{MAC: j.mac, Lang: p.Lang, Source: protocol.SourceVoice}
	return ""
}

// userLoop is a line's worker: it runs the queued requests in order, and returns when none is
// left; the next one starts another. Most lines are never talked to, and have none.
func (l *line) userLoop() {
	for {
		l.umu.Lock()
		if len(l.userq) == 0 {
			l.userq, l.working = nil, false
			l.umu.Unlock()
			return
		}
		j := l.userq[0]
		l.userq = l.userq[1:]
		l.umu.Unlock()
		l.runUser(j)
		l.umu.Lock()
		l.waiting--
		l.umu.Unlock()
	}
}

func (l *line) runUser(j userJob) {
	h := l.h
	if l.ctx.Err() != nil {
		return // the line is gone: nobody hears the answer
	}
	if j.audio != nil {
		ctx, cancel := context.WithTimeout(l.ctx, h.opts.TranscribeTimeout)
		start := time.Now()
		text, err := h.opts.Listener.Transcribe(ctx, j.mac, *j.audio)
		cancel()
		took := time.Since(start)
		if err != nil {
			h.log.Warn("speech to text failed", "mac", j.mac, "audio", audioLength(j.audio), "took", took, "err", err)
			l.writeError(j.id, protocol.CodeServerError, "Speech to text failed", err.Error())
			return
		}
		j.turn.Text = strings.TrimSpace(text)
		if j.turn.Text == "" {
			h.log.Info("heard nothing understood", "mac", j.mac, "audio", audioLength(j.audio), "took", took)
			l.writeResult(j.id, protocol.UserResult{Status: protocol.StatusEmpty})
			return
		}
		h.log.Debug("transcribed", "mac", j.mac, "audio", audioLength(j.audio), "took", took)
		l.writeResult(j.id, protocol.UserResult{Status: protocol.StatusAccepted, Text: j.turn.Text, TurnID: j.turn.ID})
		h.heard(l, j.turn)
	}
	ctx, cancel := context.WithCancelCause(l.ctx)
	l.umu.Lock()
	l.cancelTurn = cancel
	l.umu.Unlock()
	h.opts.Listener.Turn(ctx, j.turn)
	l.umu.Lock()
	l.cancelTurn = nil
	l.umu.Unlock()
	cancel(nil)
}

// interrupt stops the turn running for the line, if any.
func (l *line) interrupt() {
	l.umu.Lock()
	cancel := l.cancelTurn
	l.umu.Unlock()
	if cancel != nil {
		l.h.log.Info("turn interrupted: the person spoke over the reply", "remote", l.remote, "mac", l.mac())
		cancel(ErrInterrupted)
	}
}

// heard logs and publishes what a person said to a device.
func (h *Hub) heard(l *line, t UserTurn) {
	h.log.Info("heard", "mac", t.MAC, "text", t.Text, "source", t.Source, "turn_id", t.ID)
	e := Event{Kind: Heard, Device: Device{MAC: t.MAC, RemoteAddr: l.remote, ClientID: l.clientID, Node: h.nodeName()}, Text: t.Text, Source: t.Source, TurnID: t.ID}
	h.emit(e)
	if h.opts.Cluster != nil {
		h.opts.Cluster.Publish(e)
	}
}

// mac is the MAC the line serves now; "" before it registered or once replaced.
func (l *line) mac() string {
	l.h.mu.Lock()
	defer l.h.mu.Unlock()
	if l.reg == nil || l.h.devices[l.reg.mac] != l.reg {
		return ""
	}
	return l.reg.mac
}

func (l *line) writeResult(id json.RawMessage, v any) {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if err := l.s.WriteResult(id, v); err != nil {
		l.h.log.Debug("writing an answer", "remote", l.remote, "err", err)
	}
}

func audioLength(u *Utterance) time.Duration {
	return time.Duration(len(u.Samples)) * time.Second / time.Duration(max(u.Rate, 1))
}

func newTurnID() string {
	var b [8]byte
	rand.Read(b[:])
	return "turn-" + hex.EncodeToString(b[:])
}
