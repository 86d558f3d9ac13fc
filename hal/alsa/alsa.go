package alsa

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/internal/mixerexec"
)

// Defaults for the zero fields of Options.
const (
	DefaultDevice  = "default"
	DefaultControl = "Master"
	DefaultCommand = "amixer"
)

// haltTimeout bounds Halt, which has no context: a speaker that cannot be
// muted within it is reported as an error rather than hanging shutdown.
const haltTimeout = 5 * time.Second

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

// Speaker is a hal.Speaker on one ALSA mixer control. It is safe for
// concurrent use; operations on it run one at a time.
type Speaker struct {
	device, control, command string
	log                      *slog.Logger
	// hasSwitch records whether the control has a playback switch, so mute
	// and unmute are only asked of controls that can do them.
	hasSwitch bool
	// turn is held for a whole operation, so a SetVolume's read-back sees
	// its own write; a channel rather than a mutex lets a waiter give up
	// when its context ends.
	turn mixerexec.Turn
}

var _ hal.Speaker = (*Speaker)(nil)

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
	s := &Speaker{
		device:  o.Device,
		control: o.Control,
		command: o.Command,
		turn:    mixerexec.NewTurn(),
	}
	s.log = o.Logger.With("component", s.String())

	out, err := s.amixer(ctx, "sget", s.control)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot open control %q on device %q: %w", s, s.control, s.device, err)
	}
	st, err := parse(out)
	if err != nil {
		return nil, fmt.Errorf("%s: control %q on device %q: %w", s, s.control, s.device, err)
	}
	if !st.hasVolume {
		return nil, fmt.Errorf("%s: control %q on device %q has no playback volume (capabilities: %s)", s, s.control, s.device, st.caps)
	}
	s.hasSwitch = st.hasSwitch
	return s, nil
}

// String returns "alsa:<device>/<control>".
func (s *Speaker) String() string { return "alsa:" + s.device + "/" + s.control }

// Halt sets the control to 0% and turns its playback switch off, if it has
// one. It is bounded by an internal time-out, having no context.
func (s *Speaker) Halt() error {
	ctx, cancel := context.WithTimeout(context.Background(), haltTimeout)
	defer cancel()
	if err := s.acquire(ctx); err != nil {
		return fmt.Errorf("%s: cannot mute: %w", s, err)
	}
	defer s.release()
	if _, err := s.amixer(ctx, s.setArgs("0%", "mute")...); err != nil {
		return fmt.Errorf("%s: cannot mute: %w", s, err)
	}
	return nil
}

// SetVolume sets every playback channel to percent, turns the playback
// switch on, and reads the control back. It fails if the mixer did not
// take the value: the read-back may differ from percent only by the
// rounding of the control's own steps.
func (s *Speaker) SetVolume(ctx context.Context, percent int) error {
	if percent < 0 || percent > 100 {
		return fmt.Errorf("%s: volume %d not in 0..100: %w", s, percent, hal.ErrOutOfRange)
	}
	if err := s.acquire(ctx); err != nil {
		return err
	}
	defer s.release()
	if _, err := s.amixer(ctx, s.setArgs(strconv.Itoa(percent)+"%", "unmute")...); err != nil {
		return fmt.Errorf("%s: cannot set the volume to %d%%: %w", s, percent, err)
	}
	st, err := s.read(ctx)
	if err != nil {
		return fmt.Errorf("%s: set the volume to %d%% but cannot read it back: %w", s, percent, err)
	}
	if got := st.percent(); abs(got-percent) > st.tolerance() {
		return fmt.Errorf("%s: set the volume to %d%% but it reads back as %d%%", s, percent, got)
	}
	return nil
}

// Volume reads the control from the mixer: the mean of its playback
// channels, a channel whose switch is off counting as 0.
func (s *Speaker) Volume(ctx context.Context) (int, error) {
	if err := s.acquire(ctx); err != nil {
		return 0, err
	}
	defer s.release()
	st, err := s.read(ctx)
	if err != nil {
		return 0, fmt.Errorf("%s: cannot read the volume: %w", s, err)
	}
	return st.percent(), nil
}

func (s *Speaker) read(ctx context.Context) (state, error) {
	out, err := s.amixer(ctx, "sget", s.control)
	if err != nil {
		return state{}, err
	}
	return parse(out)
}

// setArgs returns the sset arguments for level, adding the switch word
// only when the control has a switch: amixer rejects it otherwise.
func (s *Speaker) setArgs(level, sw string) []string {
	args := []string{"sset", s.control, level}
	if s.hasSwitch {
		args = append(args, sw)
	}
	return args
}

func (s *Speaker) acquire(ctx context.Context) error {
	if err := s.turn.Take(ctx); err != nil {
		return fmt.Errorf("%s: %w", s, err)
	}
	return nil
}

func (s *Speaker) release() { s.turn.Give() }

// amixer runs the command with -D device and args, returning its standard
// output.
func (s *Speaker) amixer(ctx context.Context, args ...string) (string, error) {
	argv := append([]string{"-D", s.device}, args...)
	return mixerexec.Run(ctx, s.log, "alsa-utils", s.command, argv...)
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

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
