package doctor

import (
	"context"
	"fmt"

	"github.com/devicectl/devicectl/hal"
)

// Part is one configured part of the hardware to check: Open opens it as run does. A part that
// is Optional and does not open is a warning, not a failure: run starts without its tool.
type Part[T any] struct {
	Driver   string // the configured driver, for the remedy
	Optional bool
	Open     func(ctx context.Context) (T, error)
}

// Speaker opens the speaker and reads its volume back. It does not halt it: that would mute it.
func Speaker(ctx context.Context, p Part[hal.Speaker]) Result {
	r := Result{Name: "speaker", Remedy: SpeakerRemedy(p.Driver)}
	spk, err := p.Open(ctx)
	if err != nil {
		return openFailed(r, err, p.Optional, "amplify_volume")
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
// connection is the face's bus ("spi", "i2c"), which the remedy depends on.
func Face(ctx context.Context, p Part[hal.Face], connection string) Result {
	r := Result{Name: "face", Remedy: FaceRemedy(p.Driver, connection)}
	face, err := p.Open(ctx)
	if err != nil {
		return openFailed(r, err, p.Optional, "set_virtual_human_expression")
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

// SpeakerRemedy is what to check when a speaker of driver does not open or answer.
func SpeakerRemedy(driver string) string {
	switch driver {
	case "alsa":
		return "list the devices with aplay -L and the controls with amixer -D DEVICE scontrols; set hardware.speaker.device and hardware.speaker.control; is the user in the audio group?"
	case "pulse":
		return "is PulseAudio or PipeWire running for this user (pactl info / wpctl status)? set hardware.speaker.device to a sink from pactl list short sinks"
	case "max9744":
		return "check the wiring and power, and find the address with i2cdetect -y BUS (0x49 to 0x4B); set hardware.speaker.bus and hardware.speaker.address"
	}
	return ""
}

// FaceRemedy is what to check when a face of driver, on connection, does not open or answer.
func FaceRemedy(driver, connection string) string {
	switch driver {
	case "ssd1306":
		if connection == "spi" {
			return "check the wiring (MOSI, SCLK, CS, DC, RST) and that SPI is enabled; set hardware.face.bus and hardware.face.dc_pin"
		}
		return "check the wiring and find the address with i2cdetect -y BUS (usually 0x3C or 0x3D); set hardware.face.bus and hardware.face.address"
	case "apa102", "ws2812":
		return "is SPI enabled (ls /dev/spidev*) and the user in the spi group? set hardware.face.bus to the port"
	case "command":
		return "is hardware.face.command's program installed and executable by the service user?"
	}
	return ""
}
