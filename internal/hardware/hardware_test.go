package hardware

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/spi"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/driverreg"
	// The real drivers (sim, max9744, ssd1306, command), registered as the program registers
	// them: this package opens what the registry holds and registers nothing itself.
	_ "github.com/devicectl/devicectl/hal/drivers"
	"github.com/devicectl/devicectl/hal/haltest"
	"github.com/devicectl/devicectl/internal/config"
)

// The fake drivers the tests open. They join the registry before anything looks it up: package
// initialisation runs before the tests, and only a lookup starts the registry.
var (
	speakers = map[string]*haltest.Speaker{} // the last one each fake driver opened
	faces    = map[string]*haltest.Face{}
	errNoBus = errors.New("no such bus")
)

func init() {
	openSpeaker := func(ctx context.Context, c driverreg.SpeakerConfig, _ *driverreg.Env) (hal.Speaker, error) {
		s := &haltest.Speaker{Level: 66}
		speakers[c.Driver] = s
		return s, nil
	}
	driverreg.Default.MustRegister(
		&driverreg.Speaker{Name: "test-readable", Open: openSpeaker},
		&driverreg.Speaker{Name: "test-blind", Open: openSpeaker, Blind: true},
		&driverreg.Speaker{Name: "test-broken", Open: func(context.Context, driverreg.SpeakerConfig, *driverreg.Env) (hal.Speaker, error) {
			return &haltest.Speaker{VolumeErr: errors.New("no mixer")}, nil
		}},
		&driverreg.Face{Name: "test-face", Open: func(context.Context, driverreg.FaceConfig, *driverreg.Env) (hal.Face, error) {
			f := &haltest.Face{}
			faces["test-face"] = f
			return f, nil
		}},
	)
}

// noBuses is a host without buses.
type noBuses struct{}

func (noBuses) I2C(string) (i2c.Bus, error)    { return nil, errNoBus }
func (noBuses) SPI(string) (spi.Port, error)   { return nil, errNoBus }
func (noBuses) Pin(string) (gpio.PinIO, error) { return nil, errNoBus }

func env() *driverreg.Env {
	return &driverreg.Env{Buses: noBuses{}, Logger: slog.New(slog.DiscardHandler)}
}

// A speaker starts at start_volume; doctor's keepLevel leaves a readable one alone, but still
// sets a blind one, whose level cannot be read.
func TestOpenSpeakerStartLevel(t *testing.T) {
	for _, tc := range []struct {
		driver    string
		keepLevel bool
		want      []string
	}{
		{"test-readable", false, []string{"SetVolume(40)", "Volume()"}},
		{"test-readable", true, []string{"Volume()"}},
		{"test-blind", true, []string{"SetVolume(40)", "Volume()"}},
		{"sim", false, nil}, // a simulation starts at its own level
	} {
		c := config.Defaults().Hardware.Speaker
		c.Driver = tc.driver
		spk, err := OpenSpeaker(t.Context(), c, env(), tc.keepLevel)
		if err != nil {
			t.Fatalf("%s: %v", tc.driver, err)
		}
		if tc.driver == "sim" {
			if v, _ := spk.Volume(t.Context()); v == c.Start {
				t.Errorf("sim speaker at %d%%: start_volume was applied to a simulation", v)
			}
			continue
		}
		if got := speakers[tc.driver].Calls(); !slices.Equal(got, tc.want) {
			t.Errorf("%s, keepLevel %v: calls %q, want %q", tc.driver, tc.keepLevel, got, tc.want)
		}
	}
}

// A part that cannot be opened or read is a PartError naming its section, or the key the driver
// named.
func TestPartErrors(t *testing.T) {
	sp := config.Defaults().Hardware.Speaker
	fc := config.Defaults().Hardware.Face
	check := func(what string, err error, key string) {
		t.Helper()
		var pe *PartError
		if !errors.As(err, &pe) || pe.Key != key {
			t.Errorf("%s: %v, want a PartError of %s", what, err, key)
		}
	}
	sp.Driver = "nonesuch"
	_, err := OpenSpeaker(t.Context(), sp, env(), false)
	check("unknown speaker driver", err, "hardware.speaker.driver")
	sp.Driver = "test-broken"
	_, err = OpenSpeaker(t.Context(), sp, env(), false)
	check("a speaker that cannot be read", err, "hardware.speaker")
	sp.Driver = "max9744"
	_, err = OpenSpeaker(t.Context(), sp, env(), false)
	check("no I2C bus", err, "hardware.speaker")
	if !errors.Is(err, errNoBus) {
		t.Errorf("no I2C bus: %v does not wrap the bus's error", err)
	}

	fc.Driver = "ssd1306"
	fc.Connection, fc.DCPin = "spi", "GPIO25"
	_, err = OpenFace(t.Context(), fc, env())
	check("no SPI port", err, "hardware.face")
	fc.Driver = "nonesuch"
	_, err = OpenFace(t.Context(), fc, env())
	check("unknown face driver", err, "hardware.face.driver")
}

// A missing optional part is left out with a warning; a missing required one fails the start and
// halts what had opened.
func TestOpenOptionalParts(t *testing.T) {
	c := config.Defaults()
	c.Hardware.Speaker.Driver = "test-readable"
	c.Hardware.Face.Driver = "command"
	c.Hardware.Face.Command = []string{"/nonexistent/show-face"}
	var log strings.Builder
	logger := slog.New(slog.NewTextHandler(&log, nil))

	if _, err := Open(t.Context(), c, logger); err == nil || !strings.Contains(err.Error(), "hardware.face: ") {
		t.Errorf("Open with a required face missing = %v, want an error naming hardware.face", err)
	}
	if calls := speakers["test-readable"].Calls(); calls[len(calls)-1] != "Halt()" {
		t.Errorf("the speaker opened before the failure: calls %q, want it halted", calls)
	}

	c.Hardware.Face.Optional = true
	hw, err := Open(t.Context(), c, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer hw.Halt()
	if hw.Face != nil || hw.Speaker == nil {
		t.Errorf("Open = speaker %v, face %v; want the speaker and no face", hw.Speaker, hw.Face)
	}
	if !strings.Contains(log.String(), "starting without set_virtual_human_expression") {
		t.Errorf("no warning about the missing face:\n%s", log.String())
	}
	if hw.String() != "haltest-speaker" {
		t.Errorf("String = %q", hw.String())
	}
}

// Mode sim replaces every part, whatever the parts say.
func TestOpenSim(t *testing.T) {
	c := config.Defaults()
	c.Hardware.Mode = "sim"
	c.Hardware.Face.Driver = "test-face"
	hw, err := Open(t.Context(), c, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if hw.String() != "sim-speaker, sim-face" || faces["test-face"] != nil {
		t.Errorf("Open in mode sim = %q; want the simulated parts only", hw.String())
	}
	if err := hw.Halt(); err != nil {
		t.Error(err)
	}
}

// hardware.sim_latency makes the simulated parts count as real ones, their tools not inline,
// and take the latency; unset, they are instant.
func TestOpenSimLatency(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, latency := range []*time.Duration{nil, new(time.Duration(0)), new(30 * time.Millisecond)} {
		c := config.Defaults()
		c.Hardware.Mode = "sim"
		c.Hardware.SimLatency = latency
		hw, err := Open(t.Context(), c, log)
		if err != nil {
			t.Fatal(err)
		}
		reg, err := NewRegistry(hw, c, "v1", nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range reg.Tools() {
			if tool.Inline != (latency == nil) {
				t.Errorf("latency %v: %s inline = %v", latency, tool.Name, tool.Inline)
			}
		}
		start := time.Now()
		if err := hw.Speaker.SetVolume(t.Context(), 20); err != nil {
			t.Fatal(err)
		}
		if latency != nil && time.Since(start) < *latency {
			t.Errorf("latency %v: SetVolume took %v", *latency, time.Since(start))
		}
		if err := hw.Halt(); err != nil {
			t.Error(err)
		}
	}
}

// The tools are those of the parts there are, with their timeouts from the config.
func TestNewRegistry(t *testing.T) {
	c := config.Defaults()
	c.Execution.ToolTimeouts = map[string]time.Duration{"get_device_status": 2 * time.Second, "set_virtual_human_expression": time.Second}
	hw := Sim(nil)
	hw.Face = nil // an optional face missing
	reg, err := NewRegistry(hw, c, "v1.2.3", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := ToolNames(reg); got != "amplify_volume, get_device_status" {
		t.Errorf("tools %q, want the face's left out", got)
	}
	if tool, _ := reg.Lookup("get_device_status"); tool.Timeout != 2*time.Second {
		t.Errorf("get_device_status timeout = %s, want 2s", tool.Timeout)
	}
}
