package hal

import (
	"context"
	"errors"
)

// Resource is a piece of hardware (periph style): it has a short name for
// logs and can be told to go inert.
type Resource interface {
	// String returns a short name, e.g. "sim-speaker", "alsa:default/Master".
	String() string
	// Halt makes the resource inert (a speaker mutes, a face goes blank or
	// idle). It is safe to call more than once.
	Halt() error
}

// Speaker is an audio output whose volume can be set and read back.
type Speaker interface {
	Resource
	// SetVolume sets the volume in percent, 0..100. A value out of range is
	// rejected with an error wrapping ErrOutOfRange and changes nothing.
	SetVolume(ctx context.Context, percent int) error
	// Volume reads the volume back from the hardware, 0..100.
	Volume(ctx context.Context) (int, error)
}

// Face is a display that shows one Expression at a time.
type Face interface {
	Resource
	// SetExpression shows e. An expression that is not Valid is rejected
	// with an error wrapping ErrUnknownExpression and changes nothing.
	SetExpression(ctx context.Context, e Expression) error
	// Expression returns the expression currently shown.
	Expression(ctx context.Context) (Expression, error)
}

var (
	// ErrOutOfRange reports a value outside what the hardware accepts,
	// e.g. a volume outside 0..100.
	ErrOutOfRange = errors.New("hal: value out of range")
	// ErrUnknownExpression reports an Expression that is not one of
	// Expressions().
	ErrUnknownExpression = errors.New("hal: unknown expression")
)

// SampleRate is the rate, in samples per second, of the audio every Microphone delivers: mono,
// signed 16-bit, the format speech-to-text engines take.
const SampleRate = 16000

// Microphone captures audio: 16 kHz (SampleRate) mono signed 16-bit samples.
type Microphone interface {
	Resource
	// Read blocks until p holds the next samples or the capture ends, and returns how many it
	// wrote. A source that can end (a file) returns io.EOF after its last sample; after Halt,
	// Read returns an error wrapping ErrHalted.
	Read(ctx context.Context, p []int16) (int, error)
}

// ErrHalted reports a part used after Halt.
var ErrHalted = errors.New("hal: halted")
