package mic

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/devicectl/devicectl/hal"
)

// Drivers are the values of Config.Driver.
const (
	DriverPulse   = "pulse"
	DriverALSA    = "alsa"
	DriverCommand = "command"
	DriverFile    = "file"
	DriverSim     = "sim"
)

// Drivers lists the drivers Open knows, for config checks and help.
func Drivers() []string {
	return []string{DriverPulse, DriverALSA, DriverCommand, DriverFile, DriverSim}
}

// Config says which microphone to open: the hardware.microphone section.
type Config struct {
	Driver  string   // one of Drivers()
	Device  string   // pulse: the source name; alsa: the ALSA device; empty: the default
	Command []string // command: the program and its arguments; it writes 16 kHz mono s16le to stdout
	File    string   // file: a WAV file of 16 kHz mono 16-bit PCM
}

// FrameDuration is how much audio a capture hands on at a time: 20 ms, the unit voice activity
// detection works in.
const FrameDuration = 20 * time.Millisecond

// FrameSamples is the number of samples in FrameDuration.
const FrameSamples = hal.SampleRate * int(FrameDuration/time.Millisecond) / 1000

// Open opens the microphone c describes. A program that is not installed, or a file that is not
// a usable WAV, is an error here, not at the first Read.
func Open(ctx context.Context, c Config, log *slog.Logger) (hal.Microphone, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	switch c.Driver {
	case DriverPulse:
		return Start(ctx, PulseCommand(c.Device), &PipeOptions{Name: "pulse:" + orDefault(c.Device), Logger: log})
	case DriverALSA:
		return Start(ctx, ALSACommand(c.Device), &PipeOptions{Name: "alsa:" + orDefault(c.Device), Logger: log})
	case DriverCommand:
		if len(c.Command) == 0 || c.Command[0] == "" {
			return nil, errors.New("mic: the command driver needs a command (the program and its arguments)")
		}
		return Start(ctx, c.Command, &PipeOptions{Name: "command:" + c.Command[0], Logger: log})
	case DriverFile:
		if c.File == "" {
			return nil, errors.New("mic: the file driver needs a file (a 16 kHz mono 16-bit WAV)")
		}
		return OpenFile(c.File, &FileOptions{Realtime: true, ThenSilence: true})
	case DriverSim, "":
		return NewSim(nil), nil
	}
	return nil, fmt.Errorf("mic: unknown driver %q (one of %v)", c.Driver, Drivers())
}

func orDefault(device string) string {
	if device == "" {
		return "default"
	}
	return device
}

// PulseCommand is the capture program for a PulseAudio source ("" is the default source).
func PulseCommand(source string) []string {
	argv := []string{"parec", "--raw", "--format=s16le", "--rate=16000", "--channels=1", "--latency-msec=20"}
	if source != "" {
		argv = append(argv, "--device="+source)
	}
	return argv
}

// ALSACommand is the capture program for an ALSA device ("" is the default device).
func ALSACommand(device string) []string {
	argv := []string{"arecord", "-q", "-t", "raw", "-f", "S16_LE", "-r", "16000", "-c", "1", "--buffer-time=100000"}
	if device != "" {
		argv = append(argv, "-D", device)
	}
	return slices.Clip(argv)
}
