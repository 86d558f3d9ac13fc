package pulse

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"regexp"
	"strconv"
	"strings"

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

// Speaker is a hal.Speaker on one sink of a sound server, named
// "<tool>:<sink>", e.g. "pactl:@DEFAULT_SINK@". It is safe for concurrent
// use; operations on it run one at a time.
type Speaker = mixerexec.Speaker

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
	name := o.Tool + ":" + o.Sink
	k := &sink{tool: o.Tool, name: o.Sink, command: o.Command, log: o.Logger.With("component", name)}
	if _, _, err := k.Read(ctx); err != nil {
		return nil, fmt.Errorf("%s: cannot read sink %q with %s: %w", name, k.name, k.tool, err)
	}
	return mixerexec.NewSpeaker(name, k), nil
}

// sink is pactl's or wpctl's side of a Speaker: the runs on one sink.
type sink struct {
	tool, name, command string
	log                 *slog.Logger
}

// Mute mutes the sink first, for silence at once whatever happens to the
// second step, then sets it to 0.
func (k *sink) Mute(ctx context.Context) error {
	return k.runAll(ctx, k.muteArgs(true), k.volumeArgs(0))
}

// Set sets every channel to percent before unmuting, so a muted sink never
// plays at its old level.
func (k *sink) Set(ctx context.Context, percent int) error {
	return k.runAll(ctx, k.volumeArgs(percent), k.muteArgs(false))
}

// Read returns the mean of the sink's channels, 0 if it is muted, at most
// 100, with one percent of slack for the servers' own rounding.
func (k *sink) Read(ctx context.Context) (percent, slack int, err error) {
	if k.tool == ToolWpctl {
		out, err := k.run(ctx, "get-volume", k.name)
		if err != nil {
			return 0, 0, err
		}
		v, err := parseWpctl(out)
		return v, 1, err
	}
	// pactl has no one command that prints volume and mute alone.
	vol, err := k.run(ctx, "get-sink-volume", k.name)
	if err != nil {
		return 0, 0, err
	}
	mute, err := k.run(ctx, "get-sink-mute", k.name)
	if err != nil {
		return 0, 0, err
	}
	v, err := parsePactl(vol, mute)
	return v, 1, err
}

func (k *sink) volumeArgs(percent int) []string {
	if k.tool == ToolWpctl {
		return []string{"set-volume", k.name, strconv.FormatFloat(float64(percent)/100, 'f', 2, 64)}
	}
	return []string{"set-sink-volume", k.name, strconv.Itoa(percent) + "%"}
}

func (k *sink) muteArgs(mute bool) []string {
	v := "0"
	if mute {
		v = "1"
	}
	if k.tool == ToolWpctl {
		return []string{"set-mute", k.name, v}
	}
	return []string{"set-sink-mute", k.name, v}
}

func (k *sink) runAll(ctx context.Context, argvs ...[]string) error {
	for _, args := range argvs {
		if _, err := k.run(ctx, args...); err != nil {
			return err
		}
	}
	return nil
}

func (k *sink) run(ctx context.Context, args ...string) (string, error) {
	pkg := "pulseaudio-utils"
	if k.tool == ToolWpctl {
		pkg = "wireplumber"
	}
	return mixerexec.Run(ctx, k.log, pkg, k.command, args...)
}

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
