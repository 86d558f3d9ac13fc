package device

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/devicectl/devicectl/protocol"
)

// This file is the device's side of voice (VOICE.md): what the person said goes to the server as
// mcp/user/text or mcp/user/audio, and their speaking over a reply as mcp/user/interrupt. These
// requests go on the line that is registered, from any goroutine; the read loop hands their
// answers back like the registration's.

// ErrNotRegistered is returned when no line is registered: what was said cannot be sent.
var ErrNotRegistered = errors.New("not connected to the agent server")

// ErrNoVoice is returned when the server does not take voice: its registration answer lists
// features without it, or it answered -32601 (a seed-002 server).
var ErrNoVoice = errors.New("the agent server does not take voice (mcp/user/text, mcp/user/audio)")

// RemoteError is the server's JSON-RPC error answer to one of the device's voice requests.
type RemoteError struct {
	Method  string
	Code    int64
	Message string
	Details string // data.details, if any
}

func (e *RemoteError) Error() string {
	s := fmt.Sprintf("%s: the server answered %d %s", e.Method, e.Code, e.Message)
	if e.Details != "" {
		s += ": " + e.Details
	}
	return s
}

// serverVoice is what a registration answer says of voice.
type serverVoice struct {
	listed      bool // the answer carried a features list
	text, audio bool
}

// takes reports whether the server may take method: listed, or not ruled out by a list.
func (v serverVoice) takes(feature string) bool {
	if !v.listed {
		return true // a server that lists nothing is asked; -32601 then settles it
	}
	switch feature {
	case protocol.FeatureUserText:
		return v.text
	case protocol.FeatureUserAudio:
		return v.audio
	}
	return false
}

func readFeatures(result json.RawMessage) serverVoice {
	var r protocol.RegisterResult
	if json.Unmarshal(result, &r) != nil || r.Features == nil {
		return serverVoice{}
	}
	return serverVoice{listed: true, text: slices.Contains(r.Features, protocol.FeatureUserText), audio: slices.Contains(r.Features, protocol.FeatureUserAudio)}
}

// VoiceSupport is what the registered server is known to take.
type VoiceSupport int

const (
	VoiceUnknown VoiceSupport = iota // not registered, or the server lists no features
	VoiceTaken                       // it lists user/text or user/audio
	VoiceRefused                     // it lists features without voice, or answered -32601
)

// Voice reports whether the server the device is registered with takes voice.
func (a *Agent) Voice() VoiceSupport {
	v := a.view.Load()
	switch {
	case v.line == nil:
		return VoiceUnknown
	case v.line.noVoice.Load():
		return VoiceRefused
	case !v.voice.listed:
		return VoiceUnknown
	case v.voice.text || v.voice.audio:
		return VoiceTaken
	}
	return VoiceRefused
}

// UserText sends what the person said, as text (mcp/user/text), and returns the server's answer;
// the turn's reply then comes as mcp/ai/message like any other.
func (a *Agent) UserText(ctx context.Context, p protocol.UserTextParams) (protocol.UserResult, error) {
	return a.userRequest(ctx, protocol.MethodUserText, protocol.FeatureUserText, p)
}

// UserAudio sends one utterance (16 kHz mono samples, at most protocol.MaxUtterance) for the
// server to transcribe (mcp/user/audio), and returns its answer: the text it heard, or
// protocol.StatusEmpty.
func (a *Agent) UserAudio(ctx context.Context, samples []int16, lang string) (protocol.UserResult, error) {
	if limit := int(protocol.MaxUtterance / time.Second * protocol.AudioRate); len(samples) > limit {
		return protocol.UserResult{}, fmt.Errorf("%s: %s of audio is longer than the %s an utterance may be", protocol.MethodUserAudio,
			time.Duration(len(samples))*time.Second/protocol.AudioRate, protocol.MaxUtterance)
	}
	pcm := make([]byte, 2*len(samples))
	for i, s := range samples {
		pcm[2*i], pcm[2*i+1] = byte(s), byte(uint16(s)>>8) // little-endian
	}
	return a.userRequest(ctx, protocol.MethodUserAudio, protocol.FeatureUserAudio, protocol.UserAudioParams{Format: protocol.AudioFormat, Rate: protocol.AudioRate, Channels: 1, Audio: pcm, Lang: lang})
}

// Interrupt tells the server the person spoke over the reply (mcp/user/interrupt): it stops
// streaming that turn. A server that does not take voice is not told.
func (a *Agent) Interrupt() error {
	v := a.view.Load()
	l := v.line
	if l == nil {
		return ErrNotRegistered
	}
	if l.noVoice.Load() || (!v.voice.takes(protocol.FeatureUserText) && !v.voice.takes(protocol.FeatureUserAudio)) {
		return ErrNoVoice
	}
	if err := l.stream.WriteNotification(protocol.MethodUserInterrupt, struct{}{}); err != nil {
		return fmt.Errorf("%s: %w", protocol.MethodUserInterrupt, err)
	}
	return nil
}

func (a *Agent) userRequest(ctx context.Context, method, feature string, params any) (protocol.UserResult, error) {
	v := a.view.Load()
	l := v.line
	if l == nil {
		return protocol.UserResult{}, fmt.Errorf("%s: %w", method, ErrNotRegistered)
	}
	if l.noVoice.Load() {
		return protocol.UserResult{}, fmt.Errorf("%s: %w", method, ErrNoVoice)
	}
	if !v.voice.takes(feature) {
		a.sayNoVoice(v, "its registration answer lists no "+feature)
		return protocol.UserResult{}, fmt.Errorf("%s: %w", method, ErrNoVoice)
	}
	id := "user-" + strconv.FormatUint(a.userID.Add(1), 10)
	r, err := l.call(id, method, params)
	if err != nil {
		return protocol.UserResult{}, fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m := <-r.answer:
		defer r.finish(true)
		if e := m.Error; e != nil {
			if e.Code == protocol.CodeMethodNotFound {
				l.noVoice.Store(true)
				a.sayNoVoice(v, "it answered "+method+" with -32601, method not found")
				return protocol.UserResult{}, fmt.Errorf("%s: %w", method, ErrNoVoice)
			}
			re := &RemoteError{Method: method, Code: e.Code, Message: e.Message}
			var data protocol.ErrorData
			if e.Data != nil && json.Unmarshal(*e.Data, &data) == nil {
				re.Details = data.Details
			}
			return protocol.UserResult{}, re
		}
		var res protocol.UserResult
		if err := json.Unmarshal(m.Result, &res); err != nil {
			return protocol.UserResult{}, fmt.Errorf("%s: the server's answer is not {\"status\":...}: %w", method, err)
		}
		return res, nil
	case <-l.done:
		l.forget(r)
		return protocol.UserResult{}, fmt.Errorf("%s: the line was lost before the server answered", method)
	case <-ctx.Done():
		l.forget(r)
		return protocol.UserResult{}, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// sayNoVoice logs, once per server, that it does not take voice: the device goes on without it.
func (a *Agent) sayNoVoice(v *status, why string) {
	a.noVoiceMu.Lock()
	said := a.noVoiceFor == v.server
	a.noVoiceFor = v.server
	a.noVoiceMu.Unlock()
	if !said {
		v.opts.Logger.With("component", "agent").Warn("this server does not take voice; going on without it: what is heard is not sent",
			"server", v.server, "why", why)
	}
}

// voiceState is the line's own knowledge of voice, kept beside the line.
type voiceState struct {
	noVoice atomic.Bool // the server answered a voice request -32601
}

// WaitRegistered waits until a line is registered and voice requests can go on it, or ctx is
// done.
func (a *Agent) WaitRegistered(ctx context.Context) error {
	for {
		v := a.view.Load()
		if v.line != nil && v.state == Registered {
			return nil
		}
		select {
		case <-v.changed:
		case <-ctx.Done():
			return fmt.Errorf("waiting for registration: %w", ctx.Err())
		}
	}
}
