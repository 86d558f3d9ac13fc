package stt

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/devicectl/devicectl/tools"
)

// Audio is one utterance.
type Audio struct {
	Samples []int16 // mono, signed 16-bit
	Rate    int     // samples per second
	Lang    string  // what the device says it is, e.g. "en" or "zh"; "" unknown
	// Tools are what a turn on the device may call now; a grammar-driven engine listens for
	// what the planner understands with them.
	Tools []tools.Declaration
}

// Duration is how long the utterance lasts.
func (a Audio) Duration() time.Duration {
	if a.Rate <= 0 {
		return 0
	}
	return time.Duration(len(a.Samples)) * time.Second / time.Duration(a.Rate)
}

// Engine turns an utterance into text. Transcribe returns "" when nothing was understood; its
// errors name the engine. Engines are safe for concurrent use.
type Engine interface {
	Transcribe(ctx context.Context, a Audio) (string, error)
	// String names the engine for logs and errors, e.g. "command pocketsphinx_continuous".
	String() string
}

// ErrNoEngine is the error of None: no engine is configured.
var ErrNoEngine = errors.New("no speech-to-text engine is configured")

// None is the engine of a server without one: every utterance is an ErrNoEngine naming Why.
type None struct {
	Why string // how to configure one, e.g. "agent.stt.engine is none"
}

func (n None) Transcribe(context.Context, Audio) (string, error) {
	if n.Why == "" {
		return "", ErrNoEngine
	}
	return "", fmt.Errorf("%w (%s)", ErrNoEngine, n.Why)
}

func (None) String() string { return "none" }
