package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"periph.io/x/conn/v3/driver/driverreg"
	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpioreg"
	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/i2c/i2creg"
	"periph.io/x/conn/v3/spi"
	"periph.io/x/conn/v3/spi/spireg"
	// The generic Linux drivers only: i2c-dev, spidev and the GPIO character device work on every
	// board. periph's host package would add every SoC's memory-mapped drivers, about 400 KB on
	// ARMv6 that devicectl has no use for.
	_ "periph.io/x/host/v3/gpioioctl"
	_ "periph.io/x/host/v3/sysfs"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/sim"
)

// hardware is the device's parts. Speaker and Face are nil when an optional part is missing;
// the tools that need them are then not declared.
type hardware struct {
	Speaker hal.Speaker
	Face    hal.Face
	Speech  speechOut // nil: replies are not spoken

	buses *buses
}

// speechOut speaks the AI's replies; see openSpeech.
type speechOut interface {
	Observe(m device.AIMessage)
	String() string
	Close() error
}

// simHooks observe the simulated hardware; the sim console draws the face and volume with them.
type simHooks struct {
	OnVolume     func(percent int)
	OnExpression func(e hal.Expression)
}

// simHardware is every part simulated, no speech: --hardware sim, devicectl sim, call and tools.
func simHardware(hooks *simHooks) *hardware {
	var h simHooks
	if hooks != nil {
		h = *hooks
	}
	return &hardware{
		Speaker: sim.NewSpeaker(&sim.SpeakerOptions{OnChange: h.OnVolume}),
		Face:    sim.NewFace(&sim.FaceOptions{OnChange: h.OnExpression}),
	}
}

// openHardware opens the parts c configures. A part that cannot be opened is an error naming it,
// unless it is optional: then the device starts without it, and says so.
func openHardware(ctx context.Context, c *Config, log *slog.Logger) (*hardware, error) {
	if c.Hardware.Mode == "sim" {
		return simHardware(nil), nil
	}
	hw := &hardware{buses: &buses{}}
	fail := func(err error) (*hardware, error) {
		// What opened before the failure is left inert and its buses released.
		return nil, errors.Join(err, hw.Halt())
	}
	var err error
	if hw.Speaker, err = openSpeaker(ctx, c.Hardware.Speaker, hw.buses, false, log); err != nil {
		if !c.Hardware.Speaker.Optional {
			return fail(err)
		}
		log.Warn("the speaker is missing; starting without amplify_volume (hardware.speaker.optional)", "err", err)
	}
	if hw.Face, err = openFace(ctx, c.Hardware.Face, hw.buses, log); err != nil {
		if !c.Hardware.Face.Optional {
			return fail(err)
		}
		log.Warn("the face is missing; starting without set_virtual_human_expression (hardware.face.optional)", "err", err)
	}
	if hw.Speech, err = openSpeech(c.Hardware.Speech, c.Device.Language, log); err != nil {
		return fail(err)
	}
	return hw, nil
}

// String names the parts, for the start-up log line.
func (h *hardware) String() string {
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

// PartError is a part of the hardware that could not be opened; Key is its config section.
type PartError struct {
	Key string // e.g. "hardware.speaker"
	Err error
}

func (e *PartError) Error() string { return e.Key + ": " + e.Err.Error() }
func (e *PartError) Unwrap() error { return e.Err }

// Halt makes every part inert, stops speech and releases the buses; the daemon calls it on the
// way out.
func (h *hardware) Halt() error {
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
		errs = append(errs, h.buses.close())
	}
	return errors.Join(errs...)
}

// buses opens periph's buses on first use: periph's host drivers are initialised only when a part
// on a bus is configured, so a laptop or a board with only ALSA never touches /dev/i2c-* or /dev/mem.
type buses struct {
	initOnce sync.Once
	initErr  error
	closers  []interface{ Close() error }
	i2cs     map[string]i2c.Bus // by name: a speaker and a display on one bus share it
}

func (b *buses) init() error {
	b.initOnce.Do(func() {
		if _, err := driverreg.Init(); err != nil {
			b.initErr = fmt.Errorf("initialising the host's buses (periph): %w", err)
		}
	})
	return b.initErr
}

// i2c opens the I2C bus name ("" is the first one).
func (b *buses) i2c(name string) (i2c.Bus, error) {
	if err := b.init(); err != nil {
		return nil, err
	}
	if bus, ok := b.i2cs[name]; ok {
		return bus, nil
	}
	if len(i2creg.All()) == 0 {
		// periph's own message for this asks whether Init was called, which it was.
		return nil, errors.New("this machine has no I2C bus (nothing under /dev/i2c-*): is I2C enabled, e.g. dtparam=i2c_arm=on in config.txt?")
	}
	bus, err := i2creg.Open(name)
	if err != nil {
		return nil, fmt.Errorf("opening I2C bus %s: %w (is I2C enabled, e.g. dtparam=i2c_arm=on, and is the user in the i2c group?)", busName(name), err)
	}
	b.closers = append(b.closers, bus)
	if b.i2cs == nil {
		b.i2cs = map[string]i2c.Bus{}
	}
	b.i2cs[name] = bus
	return bus, nil
}

// spi opens the SPI port name ("" is the first one).
func (b *buses) spi(name string) (spi.Port, error) {
	if err := b.init(); err != nil {
		return nil, err
	}
	if len(spireg.All()) == 0 {
		return nil, errors.New("this machine has no SPI port (nothing under /dev/spidev*): is SPI enabled, e.g. dtparam=spi=on in config.txt?")
	}
	port, err := spireg.Open(name)
	if err != nil {
		return nil, fmt.Errorf("opening SPI port %s: %w (is SPI enabled, e.g. dtparam=spi=on, and is the user in the spi group?)", busName(name), err)
	}
	b.closers = append(b.closers, port)
	return port, nil
}

// pin returns the GPIO called name, e.g. GPIO25.
func (b *buses) pin(name string) (gpio.PinIO, error) {
	if err := b.init(); err != nil {
		return nil, err
	}
	p := gpioreg.ByName(name)
	if p == nil {
		return nil, fmt.Errorf("no GPIO called %q on this board", name)
	}
	return p, nil
}

func (b *buses) close() error {
	var errs []error
	for i := len(b.closers) - 1; i >= 0; i-- {
		errs = append(errs, b.closers[i].Close())
	}
	b.closers = nil
	return errors.Join(errs...)
}

func busName(name string) string {
	if name == "" {
		return "(the first one)"
	}
	return name
}
