package alsa

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"

	"github.com/devicectl/devicectl/internal/mixerexec"
)

// Defaults for the zero fields of Options.
const (
	DefaultDevice  = "default"
	DefaultControl = "Master"
	DefaultCommand = "amixer"
)

// Options configure New. A nil *Options or a zero field means the default.
type Options struct {
	// Device is the ALSA mixer device, amixer's -D (e.g. "hw:1", "pulse").
	// Default DefaultDevice.
	Device string
	// Control is the simple mixer control (e.g. "PCM", "Speaker").
	// Default DefaultControl.
	Control string
	// Command is the amixer program: a name looked up in PATH or a path.
	// Default DefaultCommand.
	Command string
	// Logger receives a debug record for each amixer run. Nil discards.
	Logger *slog.Logger
}

// Speaker is a hal.Speaker on one ALSA mixer control, named
// "alsa:<device>/<control>". It is safe for concurrent use; operations on
// it run one at a time.
type Speaker = mixerexec.Speaker

// New returns a Speaker for the control, after reading it once so that a
// missing amixer, device or control fails here, at start-up, rather than
// at the first request. The volume is left as it is.
func New(ctx context.Context, opts *Options) (*Speaker, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Device == "" {
		o.Device = DefaultDevice
	}
	if o.Control == "" {
		o.Control = DefaultControl
	}
	if o.Command == "" {
		o.Command = DefaultCommand
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	name := "alsa:" + o.Device + "/" + o.Control
	c := &control{device: o.Device, control: o.Control, command: o.Command, log: o.Logger.With("component", name)}

	out, err := c.amixer(ctx, "sget", c.control)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot open control %q on device %q: %w", name, c.control, c.device, err)
	}
	st, err := parse(out)
	if err != nil {
		return nil, fmt.Errorf("%s: control %q on device %q: %w", name, c.control, c.device, err)
	}
	if !st.hasVolume {
		return nil, fmt.Errorf("%s: control %q on device %q has no playback volume (capabilities: %s)", name, c.control, c.device, st.caps)
	}
	c.hasSwitch = st.hasSwitch
	return mixerexec.NewSpeaker(name, c), nil
}

// control is amixer's side of a Speaker: the runs on one control of one device.
type control struct {
	device, control, command string
	log                      *slog.Logger
	// hasSwitch records whether the control has a playback switch, so mute
	// and unmute are only asked of controls that can do them.
	hasSwitch bool
}

// Mute sets the control to 0% and turns its playback switch off, if it has
// one: on many codecs the lowest raw level is still audible.
func (c *control) Mute(ctx context.Context) error {
	_, err := c.amixer(ctx, c.setArgs("0%", "mute")...)
	return err
}

// Set sets every playback channel to percent and turns the playback switch
// on.
func (c *control) Set(ctx context.Context, percent int) error {
	_, err := c.amixer(ctx, c.setArgs(strconv.Itoa(percent)+"%", "unmute")...)
	return err
}

// Read returns the mean of the playback channels, a channel whose switch is
// off counting as 0, and one raw step of the control as the slack.
func (c *control) Read(ctx context.Context) (percent, slack int, err error) {
	out, err := c.amixer(ctx, "sget", c.control)
	if err != nil {
		return 0, 0, err
	}
	st, err := parse(out)
	if err != nil {
		return 0, 0, err
	}
	return st.percent(), st.tolerance(), nil
}

// setArgs returns the sset arguments for level, adding the switch word
// only when the control has a switch: amixer rejects it otherwise.
func (c *control) setArgs(level, sw string) []string {
	args := []string{"sset", c.control, level}
	if c.hasSwitch {
		args = append(args, sw)
	}
	return args
}

// amixer runs the command with -D device and args, returning its standard
// output.
func (c *control) amixer(ctx context.Context, args ...string) (string, error) {
	argv := append([]string{"-D", c.device}, args...)
	return mixerexec.Run(ctx, c.log, "alsa-utils", c.command, argv...)
}

// state is what amixer printed about a control.
type state struct {
	caps                 string
	hasVolume, hasSwitch bool
	// lo and hi are the raw playback range, if amixer printed it.
	lo, hi    int
	hasLimits bool
	channels  []channel
}

type channel struct {
	percent int
	off     bool
}

// percent is the mean of the channels, a channel that is switched off
// counting as 0.
func (st state) percent() int {
	sum := 0
	for _, c := range st.channels {
		if !c.off {
			sum += c.percent
		}
	}
	return int(math.Round(float64(sum) / float64(len(st.channels))))
}

// tolerance is how far a read-back may be from the percent set: one raw
// step of the control, plus one for amixer rounding both ways.
func (st state) tolerance() int {
	if !st.hasLimits || st.hi <= st.lo {
		return 1
	}
	return int(math.Ceil(100/float64(st.hi-st.lo))) + 1
}

// parse reads the output of `amixer sget`, e.g.
//
//	Simple mixer control 'Master',0
//	  Capabilities: pvolume pswitch pswitch-joined
//	  Playback channels: Front Left - Front Right
//	  Limits: Playback 0 - 65536
//	  Mono:
//	  Front Left: Playback 41288 [63%] [on]
//	  Front Right: Playback 41288 [63%] [on]
//
// A mono control prints one "Mono: Playback ..." line; a control whose
// volume is common to playback and capture prints "Limits: 0 - 31" and
// channel lines without the word Playback.
func parse(out string) (state, error) {
	var st state
	sawHeader := false
	for line := range strings.Lines(out) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "Simple mixer control ") {
			sawHeader = true
			continue
		}
		name, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		rest = strings.TrimSpace(rest)
		switch name {
		case "Capabilities":
			st.caps = rest
			for _, c := range strings.Fields(rest) {
				switch c {
				case "pvolume", "volume":
					st.hasVolume = true
				case "pswitch", "switch":
					st.hasSwitch = true
				}
			}
			continue
		case "Playback channels", "Capture channels":
			continue
		case "Limits":
			st.lo, st.hi, st.hasLimits = parseLimits(rest)
			continue
		}
		if c, ok := parseChannel(rest); ok {
			st.channels = append(st.channels, c)
		}
	}
	if !sawHeader {
		return state{}, fmt.Errorf("amixer printed no mixer control: %q", mixerexec.Clip(out))
	}
	if st.hasVolume && len(st.channels) == 0 {
		return state{}, fmt.Errorf("amixer printed no playback volume: %q", mixerexec.Clip(out))
	}
	return st, nil
}

// parseLimits reads "Playback 0 - 65536" or "0 - 31", ignoring a capture
// range after it.
func parseLimits(s string) (lo, hi int, ok bool) {
	s = strings.TrimPrefix(s, "Playback ")
	if strings.HasPrefix(s, "Capture") {
		return 0, 0, false
	}
	f := strings.Fields(s)
	if len(f) < 3 || f[1] != "-" {
		return 0, 0, false
	}
	lo, err1 := strconv.Atoi(f[0])
	hi, err2 := strconv.Atoi(f[2])
	return lo, hi, err1 == nil && err2 == nil
}

// parseChannel reads the playback part of a channel line, e.g.
// "Playback 40 [95%] [-3.00dB] [off] Capture 0 [0%] [on]" or "0 [0%] [on]".
func parseChannel(s string) (channel, bool) {
	if strings.HasPrefix(s, "Capture") {
		return channel{}, false
	}
	s = strings.TrimPrefix(s, "Playback")
	if i := strings.Index(s, "Capture"); i >= 0 {
		s = s[:i]
	}
	c := channel{percent: -1}
	for _, f := range strings.Fields(s) {
		if !strings.HasPrefix(f, "[") || !strings.HasSuffix(f, "]") {
			continue
		}
		v := f[1 : len(f)-1]
		switch {
		case v == "off":
			c.off = true
		case strings.HasSuffix(v, "%") && c.percent < 0:
			n, err := strconv.Atoi(strings.TrimSuffix(v, "%"))
			if err != nil || n < 0 || n > 100 {
				return channel{}, false
			}
			c.percent = n
		}
	}
	return c, c.percent >= 0
}
