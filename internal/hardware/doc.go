// Package hardware opens the device's parts from the hardware section of the config: a speaker
// and a face, each through the driver hal/driverreg has under its configured name, and speech.
// It also builds the device's own tools on those parts (NewRegistry). Commands that only need the
// declarations, or a device on a laptop, use Sim.
package hardware
