// Package driverreg is the registry of devicectl's hardware backends, in the manner of periph's
// driverreg: each backend (hal/sim, hal/alsa, hal/oled, ...) describes itself as a Speaker or
// Face driver, a name and a constructor from its config section, and the list in hal/drivers
// registers them all. A program registers the drivers it wants by importing that list
// (cmd/devicectl does), as periph's host leaves its drivers to the program: a package that only
// reads the config links none. The config checks hardware.speaker.driver and
// hardware.face.driver against the names registered when it reads them, and the daemon opens a
// part by looking its driver up, so a new backend is one new folder (with its Driver value) and
// one line in hal/drivers.
//
// The registry is explicit: registering a name twice is an error, and so is registering once the
// registry has started (its first lookup), so which drivers exist never changes under a running
// device.
package driverreg
