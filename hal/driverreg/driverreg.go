package driverreg

import (
	"context"
	"errors"
	"fmt"
	"image"
	"log/slog"
	"slices"
	"sync"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/spi"

	"github.com/devicectl/devicectl/hal"
)

// SpeakerConfig is the hardware.speaker section: the audio output whose volume amplify_volume
// sets. Each driver reads the keys it needs.
type SpeakerConfig struct {
	Driver   string // a registered speaker driver: sim, alsa, pulse, max9744
	Device   string // alsa: the ALSA device (amixer -D); pulse: the sink or node; empty: the default
	Control  string // alsa: the mixer control
	Tool     string // pulse: pactl or wpctl
	Bus      string // max9744: the I2C bus; empty: the first one
	Address  uint16 // max9744: the I2C address
	Start    int    // the volume set at start-up
	Optional bool   // start without amplify_volume when the part is missing
}

// FaceConfig is the hardware.face section: the display set_virtual_human_expression drives.
type FaceConfig struct {
	Driver     string      // a registered face driver: sim, ssd1306, apa102, ws2812, command
	Connection string      // ssd1306: i2c or spi
	Bus        string      // the I2C bus (ssd1306 over i2c) or SPI port (the rest); empty: the first
	Address    uint16      // ssd1306 over i2c: the I2C address
	DCPin      string      // ssd1306 over spi: the data/command GPIO
	Size       image.Point // ssd1306: width (X) and height (Y) in pixels
	Pixels     int         // apa102, ws2812: LEDs on the strip or ring
	Brightness int         // apa102, ws2812: percent
	Command    []string    // command: the program and its first arguments; the expression is appended
	Optional   bool        // start without set_virtual_human_expression when the part is missing
}

// Env is what a driver's constructor may use besides its section.
type Env struct {
	Buses  Buses // the host's I2C, SPI and GPIO, shared by the parts
	Logger *slog.Logger
}

// Buses opens the host's buses by name ("" is the first one). hal/hostbus is the real one.
type Buses interface {
	I2C(name string) (i2c.Bus, error)
	SPI(name string) (spi.Port, error)
	Pin(name string) (gpio.PinIO, error)
}

// BusName names a bus for messages.
func BusName(name string) string {
	if name == "" {
		return "(the first one)"
	}
	return name
}

// Speaker is a speaker driver.
type Speaker struct {
	Name string
	// Open opens the part; the caller sets the start-up volume and reads it back.
	Open func(ctx context.Context, c SpeakerConfig, env *Env) (hal.Speaker, error)
	// Check, when set, validates what the section's keys say together for this driver; a
	// *KeyError names the key at fault.
	Check func(c SpeakerConfig) error
	// Blind is true for a part that cannot report its level: it is always set at start-up, even
	// by doctor beside a running service.
	Blind bool
	// Simulated is true for a part that starts at its own level: start_volume does not apply.
	Simulated bool
	// Remedy, when set, tells a person what to check when the part does not open.
	Remedy func(c SpeakerConfig) string
}

// Face is a face (display) driver.
type Face struct {
	Name string
	// Open opens the part; opening draws its first expression (idle).
	Open   func(ctx context.Context, c FaceConfig, env *Env) (hal.Face, error)
	Check  func(c FaceConfig) error
	Remedy func(c FaceConfig) string
}

// KeyError is a driver's complaint about one key of its section, e.g. "dc_pin".
type KeyError struct {
	Key string
	Err error
}

func (e *KeyError) Error() string { return e.Key + ": " + e.Err.Error() }
func (e *KeyError) Unwrap() error { return e.Err }

// ErrStarted is returned by Register once the registry has been looked up.
var ErrStarted = errors.New("driverreg: the registry has started; register drivers before the first lookup")

// Registry holds the drivers by name. The zero value is empty and ready to use.
type Registry struct {
	mu       sync.Mutex
	started  bool
	speakers []*Speaker
	faces    []*Face
}

// Default is the registry hal/drivers fills, in a program that imports it, and devicectl uses.
var Default = &Registry{}

// A Driver is a *Speaker or a *Face.
type Driver interface{ name() string }

// Register adds drivers. It refuses an empty or duplicate name (within its kind: a speaker and a
// face may share one), a driver without Open, and any registration after the first lookup;
// nothing is added then.
func (r *Registry) Register(drivers ...Driver) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started {
		return ErrStarted
	}
	speakers, faces := slices.Clone(r.speakers), slices.Clone(r.faces)
	for _, d := range drivers {
		switch d := d.(type) {
		case *Speaker:
			if err := checkNew(d.Name, d.Open != nil, names(speakers)); err != nil {
				return fmt.Errorf("driverreg: speaker driver: %w", err)
			}
			speakers = append(speakers, d)
		case *Face:
			if err := checkNew(d.Name, d.Open != nil, names(faces)); err != nil {
				return fmt.Errorf("driverreg: face driver: %w", err)
			}
			faces = append(faces, d)
		}
	}
	r.speakers, r.faces = speakers, faces
	return nil
}

// MustRegister is Register for the registration list, where a mistake is the program's.
func (r *Registry) MustRegister(drivers ...Driver) {
	if err := r.Register(drivers...); err != nil {
		panic(err)
	}
}

func checkNew(name string, hasOpen bool, taken []string) error {
	switch {
	case name == "":
		return errors.New("no name")
	case !hasOpen:
		return fmt.Errorf("%q has no Open", name)
	case slices.Contains(taken, name):
		return fmt.Errorf("%q is registered twice", name)
	}
	return nil
}

func (d *Speaker) name() string { return d.Name }
func (d *Face) name() string    { return d.Name }

// names lists the names of ds, in order.
func names[T interface{ name() string }](ds []T) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.name()
	}
	return out
}

// SpeakerNames and FaceNames list the registered names, in registration order. They do not start
// the registry: the config lists them in its help before anything is opened.
func (r *Registry) SpeakerNames() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return names(r.speakers)
}

// FaceNames lists the face drivers' names, in registration order.
func (r *Registry) FaceNames() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return names(r.faces)
}

// Speaker returns the speaker driver called name, nil if there is none. It starts the registry.
func (r *Registry) Speaker(name string) *Speaker {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started = true
	if i := slices.Index(names(r.speakers), name); i >= 0 {
		return r.speakers[i]
	}
	return nil
}

// Face returns the face driver called name, nil if there is none. It starts the registry.
func (r *Registry) Face(name string) *Face {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started = true
	if i := slices.Index(names(r.faces), name); i >= 0 {
		return r.faces[i]
	}
	return nil
}
