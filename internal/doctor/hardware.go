package doctor

import (
	"context"
	"log/slog"
	"time"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/driverreg"
	"github.com/devicectl/devicectl/hal/hostbus"
	"github.com/devicectl/devicectl/hal/mic"
	"github.com/devicectl/devicectl/internal/config"
	devhw "github.com/devicectl/devicectl/internal/hardware"
)

// Hardware opens each part h configures as run does and reads it back: the speaker, the face,
// the speech program (speaking lang) and, when there is one, the microphone. A part's remedy is
// its driver's (driverreg), so a new driver needs no more work here.
func Hardware(ctx context.Context, h config.HardwareConfig, lang string, log *slog.Logger) []Result {
	if h.Mode == "sim" {
		return []Result{{Name: "hardware", Detail: "all simulated (hardware.mode sim, or --hardware sim)"}}
	}
	var b hostbus.Buses // opened as the parts need them
	defer b.Close()
	env := &driverreg.Env{Buses: &b, Logger: log}
	var speech func() (Speech, error)
	if h.Speech.Driver != "none" {
		speech = func() (Speech, error) { return devhw.OpenSpeech(h.Speech, lang, log) }
	}
	var speakerRemedy, faceRemedy string
	if d := driverreg.Default.Speaker(h.Speaker.Driver); d != nil && d.Remedy != nil {
		speakerRemedy = d.Remedy(h.Speaker)
	}
	if d := driverreg.Default.Face(h.Face.Driver); d != nil && d.Remedy != nil {
		faceRemedy = d.Remedy(h.Face)
	}
	return append([]Result{
		Speaker(ctx, Part[hal.Speaker]{Optional: h.Speaker.Optional, Remedy: speakerRemedy,
			Open: func(ctx context.Context) (hal.Speaker, error) { return devhw.OpenSpeaker(ctx, h.Speaker, env, true) }}),
		Face(ctx, Part[hal.Face]{Optional: h.Face.Optional, Remedy: faceRemedy,
			Open: func(ctx context.Context) (hal.Face, error) { return devhw.OpenFace(ctx, h.Face, env) }}),
		CheckSpeech(speech),
	}, microphone(ctx, h.Microphone, log)...)
}

// microphone listens to the microphone for a second and, for PulseAudio, says whether its
// source is echo-cancelled; no rows when there is no microphone.
func microphone(ctx context.Context, m config.MicrophoneConfig, log *slog.Logger) []Result {
	if m.Driver == config.MicrophoneOff {
		return nil
	}
	results := []Result{Microphone(ctx, func(ctx context.Context) (hal.Microphone, error) {
		return mic.Open(ctx, m.Mic(), log)
	}, time.Second)}
	if m.Driver == mic.DriverPulse {
		results = append(results, EchoCancel(ctx, m.Device, RunPactl))
	}
	return results
}
