package pulse

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/internal/mixerexec"
)

// Tools New can drive.
const (
	ToolPactl = "pactl"
	ToolWpctl = "wpctl"
)

// Default sinks, the servers' own names for "the default output".
const (
	DefaultPactlSink = "@DEFAULT_SINK@"
	DefaultWpctlSink = "@DEFAULT_AUDIO_SINK@"
)

// haltTimeout bounds Halt, which has no context.
const haltTimeout = 5 * time.Second

// Options configure New. A nil *Options or a zero field means the default.
type Options struct {
	// Tool is ToolPactl (the default) or ToolWpctl.
	Tool string
	// Sink is the sink (pactl: a name or index) or node (wpctl: an id or a
	// special name). Default DefaultPactlSink or DefaultWpctlSink.
	Sink string
	// Command is the program to run: a name looked up in PATH or a path.
	// Default: Tool.
	Command string
	// Logger receives a debug record for each run. Nil discards.
	Logger *slog.Logger
}

// Speaker is a hal.Speaker on one sink of a sound server. It is safe for
// concurrent use; operations on it run one at a time.
type Speaker struct {
	tool, sink, command string
	log                 *slog.Logger
	// turn is held for a whole operation, so a SetVolume's read-back sees
	// its own write; a channel rather than a mutex lets a waiter give up
	// when its context ends.
	turn mixerexec.Turn
}

var _ hal.Speaker = (*Speaker)(nil)

// New returns a Speaker for the sink, after reading its volume once so that
// a missing program, server or sink fails here, at start-up, rather than at
// the first request. The volume is left as it is.
func New(ctx context.Context, opts *Options) (*Speaker, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	switch o.Tool {
	case "", ToolPactl:
		o.Tool = ToolPactl
		if o.Sink == "" {
			o.Sink = DefaultPactlSink
		}
	case ToolWpctl:
		if o.Sink == "" {
			o.Sink = DefaultWpctlSink
		}
	default:
		return nil, fmt.Errorf("pulse: unknown tool %q (want %q or %q)", o.Tool, ToolPactl, ToolWpctl)
	}
	if o.Command == "" {
		o.Command = o.Tool
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Speaker{tool: o.Tool, sink: o.Sink, command: o.Command, turn: mixerexec.NewTurn()}
	s.log = o.Logger.With("component", s.String())
	if _, err := s.read(ctx); err != nil {
		return nil, fmt.Errorf("%s: cannot read sink %q with %s: %w", s, s.sink, s.tool, err)
	}
	return s, nil
}

// String returns "<tool>:<sink>", e.g. "pactl:@DEFAULT_SINK@".
func (s *Speaker) String() string { return s.tool + ":" + s.sink }

// Halt mutes the sink, then sets it to 0. It is bounded by an internal
// time-out, having no context.
func (s *Speaker) Halt() error {
	ctx, cancel := context.WithTimeout(context.Background(), haltTimeout)
	defer cancel()
	if err := s.acquire(ctx); err != nil {
		return fmt.Errorf("%s: cannot mute: %w", s, err)
	}
	defer s.release()
	// Mute first: silence at once, whatever happens to the second step.
	if err := s.runAll(ctx, s.muteArgs(true), s.volumeArgs(0)); err != nil {
		return fmt.Errorf("%s: cannot mute: %w", s, err)
	}
	return nil
}

// SetVolume sets every channel of the sink to percent, unmutes it, and
// reads it back, failing if the server did not take the value.
func (s *Speaker) SetVolume(ctx context.Context, percent int) error {
	if percent < 0 || percent > 100 {
		return fmt.Errorf("%s: volume %d not in 0..100: %w", s, percent, hal.ErrOutOfRange)
	}
	if err := s.acquire(ctx); err != nil {
		return err
	}
	defer s.release()
	// Level before unmuting, so a muted sink never plays at its old level.
	if err := s.runAll(ctx, s.volumeArgs(percent), s.muteArgs(false)); err != nil {
		return fmt.Errorf("%s: cannot set the volume to %d%%: %w", s, percent, err)
	}
	got, err := s.read(ctx)
	if err != nil {
		return fmt.Errorf("%s: set the volume to %d%% but cannot read it back: %w", s, percent, err)
	}
	// One percent of slack for the servers' own rounding.
	if got < percent-1 || got > percent+1 {
		return fmt.Errorf("%s: set the volume to %d%% but it reads back as %d%%", s, percent, got)
	}
	return nil
}

// Volume asks the server for the sink's volume: the mean of its channels,
// 0 if it is muted, at most 100.
func (s *Speaker) Volume(ctx context.Context) (int, error) {
	if err := s.acquire(ctx); err != nil {
		return 0, err
	}
	defer s.release()
	v, err := s.read(ctx)
	if err != nil {
		return 0, fmt.Errorf("%s: cannot read the volume: %w", s, err)
	}
	return v, nil
}

func (s *Speaker) volumeArgs(percent int) []string {
	if s.tool == ToolWpctl {
		return []string{"set-volume", s.sink, strconv.FormatFloat(float64(percent)/100, 'f', 2, 64)}
	}
	return []string{"set-sink-volume", s.sink, strconv.Itoa(percent) + "%"}
}

func (s *Speaker) muteArgs(mute bool) []string {
	v := "0"
	if mute {
		v = "1"
	}
	if s.tool == ToolWpctl {
		return []string{"set-mute", s.sink, v}
	}
	return []string{"set-sink-mute", s.sink, v}
}

func (s *Speaker) read(ctx context.Context) (int, error) {
	if s.tool == ToolWpctl {
		out, err := s.run(ctx, "get-volume", s.sink)
		if err != nil {
			return 0, err
		}
		return parseWpctl(out)
	}
	// pactl has no one command that prints volume and mute alone.
	vol, err := s.run(ctx, "get-sink-volume", s.sink)
	if err != nil {
		return 0, err
	}
	mute, err := s.run(ctx, "get-sink-mute", s.sink)
	if err != nil {
		return 0, err
	}
	return parsePactl(vol, mute)
}

func (s *Speaker) runAll(ctx context.Context, argvs ...[]string) error {
	for _, args := range argvs {
		if _, err := s.run(ctx, args...); err != nil {
			return err
		}
	}
	return nil
}

func (s *Speaker) run(ctx context.Context, args ...string) (string, error) {
	pkg := "pulseaudio-utils"
	if s.tool == ToolWpctl {
		pkg = "wireplumber"
	}
	return mixerexec.Run(ctx, s.log, pkg, s.command, args...)
}

func (s *Speaker) acquire(ctx context.Context) error {
	if err := s.turn.Take(ctx); err != nil {
		return fmt.Errorf("%s: %w", s, err)
	}
	return nil
}

func (s *Speaker) release() { s.turn.Give() }

// pactlPercent matches the percentages in
// "Volume: front-left: 21626 /  33% / -28.89 dB,   front-right: ...".
var pactlPercent = regexp.MustCompile(`/\s*(\d+)%\s*/`)

// parsePactl reads the outputs of get-sink-volume and get-sink-mute.
func parsePactl(vol, mute string) (int, error) {
	line, _, _ := strings.Cut(strings.TrimSpace(vol), "\n")
	if !strings.HasPrefix(line, "Volume:") {
		return 0, fmt.Errorf("pactl printed no volume: %q", mixerexec.Clip(vol))
	}
	ms := pactlPercent.FindAllStringSubmatch(line, -1)
	if len(ms) == 0 {
		return 0, fmt.Errorf("pactl printed no volume: %q", mixerexec.Clip(vol))
	}
	sum := 0
	for _, m := range ms {
		n, err := strconv.Atoi(m[1])
		if err != nil {
			return 0, fmt.Errorf("pactl printed a volume out of range: %q", mixerexec.Clip(vol))
		}
		sum += min(n, 100)
	}
	switch strings.TrimSpace(mute) {
	case "Mute: yes":
		return 0, nil
	case "Mute: no":
		return int(math.Round(float64(sum) / float64(len(ms)))), nil
	}
	return 0, fmt.Errorf("pactl printed no mute state: %q", mixerexec.Clip(mute))
}

// parseWpctl reads the output of get-volume: "Volume: 0.40", with
// " [MUTED]" after it when muted.
func parseWpctl(out string) (int, error) {
	f := strings.Fields(out)
	if len(f) < 2 || f[0] != "Volume:" {
		return 0, fmt.Errorf("wpctl printed no volume: %q", mixerexec.Clip(out))
	}
	v, err := strconv.ParseFloat(f[1], 64)
	if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("wpctl printed no volume: %q", mixerexec.Clip(out))
	}
	for _, w := range f[2:] {
		if w == "[MUTED]" {
			return 0, nil
		}
	}
	return int(math.Round(min(v, 1) * 100)), nil
}
