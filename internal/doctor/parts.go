package doctor

import (
	"context"
	"fmt"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/protocol"
)

// Part is one configured part of the hardware to check: Open opens it as run does. A part that
// is Optional and does not open is a warning, not a failure: run starts without its tool.
type Part[T any] struct {
	Remedy   string // what to check when it does not open or answer: its driver's
	Optional bool
	Open     func(ctx context.Context) (T, error)
}

// Speaker opens the speaker and reads its volume back. It does not halt it: that would mute it.
func Speaker(ctx context.Context, p Part[hal.Speaker]) Result {
	r := Result{Name: "speaker", Remedy: p.Remedy}
	spk, err := p.Open(ctx)
	if err != nil {
		return openFailed(r, err, p.Optional, protocol.ToolVolume)
	}
	v, err := spk.Volume(ctx)
	if err != nil {
		r.Err = err
		return r
	}
	r.Detail = fmt.Sprintf("%s, volume %d%%", spk, v)
	return r
}

// Face opens the face and reads its expression back. It does not halt it: that would blank it.
func Face(ctx context.Context, p Part[hal.Face]) Result {
	r := Result{Name: "face", Remedy: p.Remedy}
	face, err := p.Open(ctx)
	if err != nil {
		return openFailed(r, err, p.Optional, protocol.ToolExpression)
	}
	e, err := face.Expression(ctx)
	if err != nil {
		r.Err = err
		return r
	}
	r.Detail = fmt.Sprintf("%s, showing %s", face, e)
	return r
}

// Speech is a speech output: a program that speaks the device's replies.
type Speech interface {
	String() string
	Close() error
}

// CheckSpeech opens the speech output and closes it again; open nil means speech is off.
func CheckSpeech(open func() (Speech, error)) Result {
	r := Result{Name: "speech", Detail: "off (hardware.speech.driver none)",
		Remedy: "install espeak-ng (apt-get install espeak-ng), or set hardware.speech.command to a program that is installed"}
	if open == nil {
		return r
	}
	out, err := open()
	if err != nil {
		r.Err = err
		return r
	}
	r.Detail = "speaks through " + out.String()
	out.Close() // opened only to see that it opens
	return r
}

func openFailed(r Result, err error, optional bool, tool string) Result {
	if optional {
		r.Warn = err.Error() + " (optional: run starts without " + tool + ")"
		return r
	}
	r.Err = err
	return r
}
