package hardware

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/driverreg"
	"github.com/devicectl/devicectl/hal/hostbus"
	"github.com/devicectl/devicectl/hal/sim"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/protocol"
)

// Hardware is the device's parts. Speaker and Face are nil when an optional part is missing;
// the tools that need them are then not declared.
type Hardware struct {
	Speaker hal.Speaker
	Face    hal.Face
	Speech  Speech // nil: replies are not spoken
	// Instant says the parts return at once (simulated, with no hooks that may block); the
	// device may then run their calls inline (builtin.Options.Instant).
	Instant bool

	buses *hostbus.Buses
}

// Speech speaks the AI's replies; see OpenSpeech.
type Speech interface {
	Observe(m protocol.AIMessage)
	String() string
	Close() error
}

// SimHooks observe the simulated hardware; the sim console draws the face and volume with them.
type SimHooks struct {
	OnVolume     func(percent int)
	OnExpression func(e hal.Expression)
	// Latency, when set, is how long each read and change of a part takes
	// (hardware.sim_latency): the parts then count as real ones, even with 0.
	Latency *time.Duration
}

// Sim is every part simulated, no speech: --hardware sim, devicectl sim, call and tools.
func Sim(hooks *SimHooks) *Hardware {
	var h SimHooks
	if hooks != nil {
		h = *hooks
	}
	var wait time.Duration
	if h.Latency != nil {
		wait = *h.Latency
	}
	return &Hardware{
		// With no hooks and no latency, the parts only touch memory: their calls may run inline.
		Instant: h.OnVolume == nil && h.OnExpression == nil && h.Latency == nil,
		Speaker: sim.NewSpeaker(&sim.SpeakerOptions{OnChange: h.OnVolume, Latency: wait}),
		Face:    sim.NewFace(&sim.FaceOptions{OnChange: h.OnExpression, Latency: wait}),
	}
}

// Open opens the parts c configures. A part that cannot be opened is an error naming it, unless
// it is optional: then the device starts without it, and says so.
func Open(ctx context.Context, c *config.Config, log *slog.Logger) (*Hardware, error) {
	if c.Hardware.Mode == "sim" {
		return Sim(&SimHooks{Latency: c.Hardware.SimLatency}), nil
	}
	hw := &Hardware{buses: &hostbus.Buses{}}
	env := &driverreg.Env{Buses: hw.buses, Logger: log}
	fail := func(err error) (*Hardware, error) {
		// What opened before the failure is left inert and its buses released.
		return nil, errors.Join(err, hw.Halt())
	}
	var err error
	if hw.Speaker, err = OpenSpeaker(ctx, c.Hardware.Speaker, env, false); err != nil {
		if !c.Hardware.Speaker.Optional {
			return fail(err)
		}
		log.Warn("the speaker is missing; starting without amplify_volume (hardware.speaker.optional)", "err", err)
	}
	if hw.Face, err = OpenFace(ctx, c.Hardware.Face, env); err != nil {
		if !c.Hardware.Face.Optional {
			return fail(err)
		}
		log.Warn("the face is missing; starting without set_virtual_human_expression (hardware.face.optional)", "err", err)
	}
	if hw.Speech, err = OpenSpeech(c.Hardware.Speech, c.Device.Language, log); err != nil {
		return fail(err)
	}
	return hw, nil
}

// String names the parts, for the start-up log line.
func (h *Hardware) String() string {
	var parts []string
	for _, r := range []hal.Resource{h.Speaker, h.Face} {
		if r != nil {
			parts = append(parts, r.String())
		}
	}
	if h.Speech != nil {
		parts = append(parts, h.Speech.String())
	}
	return strings.Join(parts, ", ")
}

// PartError is a part of the hardware that could not be opened; Key is its config section, or
// the key of it at fault.
type PartError struct {
	Key string // e.g. "hardware.speaker", "hardware.face.dc_pin"
	Err error
}

func (e *PartError) Error() string { return e.Key + ": " + e.Err.Error() }
func (e *PartError) Unwrap() error { return e.Err }

// partError wraps a driver's error as a PartError of section, naming the key when the driver did.
func partError(section string, err error) error {
	var ke *driverreg.KeyError
	if errors.As(err, &ke) {
		return &PartError{Key: section + "." + ke.Key, Err: ke.Err}
	}
	return &PartError{Key: section, Err: err}
}

// Halt makes every part inert, stops speech and releases the buses; the daemon calls it on the
// way out.
func (h *Hardware) Halt() error {
	var errs []error
	if h.Speech != nil {
		if err := h.Speech.Close(); err != nil {
			errs = append(errs, fmt.Errorf("stopping speech: %w", err))
		}
	}
	for _, r := range []hal.Resource{h.Speaker, h.Face} {
		if r == nil {
			continue
		}
		if err := r.Halt(); err != nil {
			errs = append(errs, fmt.Errorf("halting %s: %w", r, err))
		}
	}
	if h.buses != nil {
		errs = append(errs, h.buses.Close())
	}
	return errors.Join(errs...)
}
