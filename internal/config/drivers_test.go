package config

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/driverreg"
	// The drivers the example config and the tests name. A program registers its own (the
	// package links none); the tests do as cmd/devicectl does.
	_ "github.com/devicectl/devicectl/hal/drivers"
)

// init functions run after the package's variables, the settings table among them, are
// initialised: a driver registered here comes after the table, as a program's may.
func init() {
	driverreg.Default.MustRegister(&driverreg.Face{Name: "test-late",
		Open: func(context.Context, driverreg.FaceConfig, *driverreg.Env) (hal.Face, error) {
			return nil, errors.New("test-late is never opened")
		},
	})
}

// The driver keys read the registry when they check or document a value, not when the table
// is built.
func TestDriverNamesReadWhenChecked(t *testing.T) {
	c := Defaults()
	if err := Parse([]byte("hardware:\n  face:\n    driver: test-late\n"), c); err != nil {
		t.Fatalf("a driver registered after the table: %v", err)
	}
	if c.Hardware.Face.Driver != "test-late" {
		t.Errorf("face driver %q, want test-late", c.Hardware.Face.Driver)
	}
	err := Parse([]byte("hardware:\n  face:\n    driver: hd44780\n"), Defaults())
	if want := `"hd44780" is not one of sim, ssd1306, apa102, ws2812, command, test-late`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("an unknown driver: %v, want an error naming every registered one: %s", err, want)
	}
	i := slices.IndexFunc(Keys(Defaults()), func(k Key) bool { return k.Name == "hardware.face.driver" })
	if i < 0 {
		t.Fatal("no key hardware.face.driver")
	}
	if usage := Keys(Defaults())[i].Usage; !strings.HasSuffix(usage, "(sim, ssd1306, apa102, ws2812, command, test-late)") {
		t.Errorf("hardware.face.driver's usage %q does not list the registered drivers", usage)
	}
}
