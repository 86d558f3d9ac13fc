package driverreg_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/driverreg"
	_ "github.com/devicectl/devicectl/hal/drivers"
	"github.com/devicectl/devicectl/hal/sim"
)

func speaker(name string) *driverreg.Speaker {
	return &driverreg.Speaker{Name: name, Open: func(context.Context, driverreg.SpeakerConfig, *driverreg.Env) (hal.Speaker, error) {
		return sim.NewSpeaker(nil), nil
	}}
}

func face(name string) *driverreg.Face {
	return &driverreg.Face{Name: name, Open: func(context.Context, driverreg.FaceConfig, *driverreg.Env) (hal.Face, error) {
		return sim.NewFace(nil), nil
	}}
}

func TestRegisterAndLookUp(t *testing.T) {
	var r driverreg.Registry
	if err := r.Register(speaker("a"), speaker("b"), face("a")); err != nil {
		t.Fatal(err)
	}
	if got := r.SpeakerNames(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("SpeakerNames = %q, want [a b] in registration order", got)
	}
	if got := r.FaceNames(); !slices.Equal(got, []string{"a"}) {
		t.Errorf("FaceNames = %q, want [a]: a speaker and a face may share a name", got)
	}
	if d := r.Speaker("b"); d == nil || d.Name != "b" {
		t.Errorf(`Speaker("b") = %v`, d)
	}
	if d := r.Face("b"); d != nil {
		t.Errorf(`Face("b") = %v, want nil: b is a speaker`, d)
	}
}

// A bad registration is refused whole: nothing of it is added.
func TestRegisterRefuses(t *testing.T) {
	noOpen := speaker("x")
	noOpen.Open = nil
	for _, tc := range []struct {
		name    string
		drivers []driverreg.Driver
		want    string
	}{
		{"duplicate speaker", []driverreg.Driver{speaker("a"), speaker("c"), speaker("a")}, `"a" is registered twice`},
		{"duplicate of one already there", []driverreg.Driver{speaker("c"), speaker("taken")}, `"taken" is registered twice`},
		{"duplicate face", []driverreg.Driver{face("f"), face("f")}, `"f" is registered twice`},
		{"no name", []driverreg.Driver{face("")}, "no name"},
		{"no Open", []driverreg.Driver{noOpen}, `"x" has no Open`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r driverreg.Registry
			r.MustRegister(speaker("taken"))
			err := r.Register(tc.drivers...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Register = %v, want an error containing %q", err, tc.want)
			}
			if got := r.SpeakerNames(); !slices.Equal(got, []string{"taken"}) {
				t.Errorf("after the refusal SpeakerNames = %q, want [taken]", got)
			}
			if len(r.FaceNames()) != 0 {
				t.Errorf("after the refusal FaceNames = %q, want none", r.FaceNames())
			}
		})
	}
}

// Once a driver has been looked up, the set of drivers is fixed.
func TestRegisterAfterStart(t *testing.T) {
	var r driverreg.Registry
	r.MustRegister(speaker("a"))
	r.SpeakerNames() // listing does not start the registry
	if err := r.Register(face("b")); err != nil {
		t.Fatalf("Register before any lookup: %v", err)
	}
	r.Face("nothing") // a lookup, even of no driver, does
	if err := r.Register(speaker("c")); !errors.Is(err, driverreg.ErrStarted) {
		t.Errorf("Register after a lookup = %v, want ErrStarted", err)
	}
	if r.Speaker("c") != nil {
		t.Error("the driver registered after the start is there")
	}
}

// The registration list registers every backend once.
func TestDefaultRegistry(t *testing.T) {
	if got, want := driverreg.Default.SpeakerNames(), []string{"sim", "alsa", "pulse", "max9744"}; !slices.Equal(got, want) {
		t.Errorf("speakers = %q, want %q", got, want)
	}
	if got, want := driverreg.Default.FaceNames(), []string{"sim", "ssd1306", "apa102", "ws2812", "command"}; !slices.Equal(got, want) {
		t.Errorf("faces = %q, want %q", got, want)
	}
}

// A driver's complaint about one key names it.
func TestKeyError(t *testing.T) {
	inner := errors.New("needs a GPIO")
	err := error(&driverreg.KeyError{Key: "dc_pin", Err: inner})
	if err.Error() != "dc_pin: needs a GPIO" || !errors.Is(err, inner) {
		t.Errorf("KeyError = %q, Is(inner) = %v", err, errors.Is(err, inner))
	}
}
