package doctor

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"strings"
	"time"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/mic"
)

// Microphone opens the microphone, listens for d and reports the level it heard: a room is
// about -60 to -45 dBFS, speech -35 to -15; digital silence (-96) is a muted or wrong source.
func Microphone(ctx context.Context, open func(ctx context.Context) (hal.Microphone, error), d time.Duration) Result {
	r := Result{Name: "microphone", Remedy: "check hardware.microphone: the driver and device (pactl list short sources, arecord -L), and that the microphone is not muted"}
	m, err := open(ctx)
	if err != nil {
		r.Err = err
		return r
	}
	defer m.Halt()
	ctx, cancel := context.WithTimeout(ctx, d+2*time.Second)
	defer cancel()
	want := int(d * hal.SampleRate / time.Second)
	var sum float64
	var peak int
	frame := make([]int16, mic.FrameSamples)
	got := 0
	for got < want {
		n, err := m.Read(ctx, frame)
		if err != nil && got > 0 && ctx.Err() != nil {
			break // a source that delivers slowly (an idle PulseAudio monitor): judge what came
		}
		if err != nil {
			r.Err = fmt.Errorf("%s: after %d ms of audio: %w", m, got*1000/hal.SampleRate, err)
			return r
		}
		for _, s := range frame[:n] {
			v := int(s)
			sum += float64(v * v)
			peak = max(peak, v, -v)
		}
		got += n
	}
	level := -96.0
	if rms := math.Sqrt(sum/float64(got)) / 32768; rms > 0 {
		level = max(20*math.Log10(rms), -96)
	}
	heard := time.Duration(got) * time.Second / hal.SampleRate
	r.Detail = fmt.Sprintf("%s hears %.1f dBFS over %s (peak %.1f dBFS)", m, level, heard, dbfs(peak))
	if peak == 0 {
		r.Detail, r.Warn = "", fmt.Sprintf("%s hears digital silence over %s: muted, or not the microphone", m, heard)
		r.Remedy = "unmute the source (pactl set-source-mute SOURCE 0, alsamixer), or point hardware.microphone.device at the right one"
	}
	return r
}

func dbfs(peak int) float64 {
	if peak == 0 {
		return -96
	}
	return 20 * math.Log10(float64(peak)/32768)
}

// Pactl runs pactl with args and returns its output; tests replace it.
type Pactl func(ctx context.Context, args ...string) (string, error)

// RunPactl runs the pactl on PATH.
func RunPactl(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "pactl", args...).Output()
	if err != nil {
		return "", fmt.Errorf("pactl %s: %w", strings.Join(args, " "), err)
	}
	return string(out), nil
}

// EchoCancel reports whether the PulseAudio source the microphone reads (source; "" the default
// one) is echo-cancelled by module-echo-cancel. Without it barge-in hears the device's own voice
// and interrupts itself.
func EchoCancel(ctx context.Context, source string, pactl Pactl) Result {
	r := Result{Name: "echo-cancel", Remedy: "load module-echo-cancel (aec_method=webrtc) and set hardware.microphone.device to its source: see docs/voice.md"}
	if source == "" {
		info, err := pactl(ctx, "info")
		if err != nil {
			r.Warn = "cannot ask PulseAudio for the default source: " + err.Error()
			return r
		}
		for _, line := range strings.Split(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Default Source:"); ok {
				source = strings.TrimSpace(v)
			}
		}
		if source == "" {
			r.Warn = "PulseAudio names no default source"
			return r
		}
	}
	mods, err := pactl(ctx, "list", "short", "modules")
	if err != nil {
		r.Warn = "cannot list PulseAudio's modules: " + err.Error()
		return r
	}
	var ecSources []string
	for _, line := range strings.Split(mods, "\n") {
		f := strings.Split(line, "\t")
		if len(f) < 2 || f[1] != "module-echo-cancel" {
			continue
		}
		name := ""
		if len(f) > 2 {
			for _, arg := range strings.Fields(f[2]) {
				if v, ok := strings.CutPrefix(arg, "source_name="); ok {
					name = v
				}
			}
		}
		if name == "" {
			// The module's own default: the master source's name with .echo-cancel.
			name = ".echo-cancel"
		}
		ecSources = append(ecSources, name)
	}
	for _, ec := range ecSources {
		if source == ec || (strings.HasPrefix(ec, ".") && strings.HasSuffix(source, ec)) {
			r.Detail = source + " is echo-cancelled (module-echo-cancel)"
			return r
		}
	}
	if len(ecSources) > 0 {
		r.Warn = fmt.Sprintf("module-echo-cancel is loaded, but the microphone is %s, not its source (%s)", source, strings.Join(ecSources, ", "))
		r.Remedy = "set hardware.microphone.device to the echo-cancelled source"
		return r
	}
	r.Warn = source + " is not echo-cancelled: the device hears its own voice, and barge-in interrupts it"
	return r
}

// errNoVoice is the voice row's complaint about a server of seed 002.
var errNoVoice = errors.New("this server does not take voice")
