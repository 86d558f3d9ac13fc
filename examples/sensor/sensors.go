package main

// The sensor board: where read_sensor's numbers come from. Nothing here knows about devicectl;
// on a real device this is the driver (I2C, a sysfs file, a serial line).

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"
)

// reader is one sensor: where its readings come from and in what unit.
type reader struct {
	unit   string
	source string
	read   func() (float64, error)
}

// sensors is the device's sensor board. It has no mutex: both tools declare the resource
// "sensor", so the agent never runs two of their calls at once.
type sensors struct {
	readers map[string]reader // keyed by readInput.Sensor's enum values
	hz      int
	wait    func(ctx context.Context, d time.Duration) error // a timer; tests record instead
}

// newSensors takes the temperature from the first readable thermal zone under thermal
// (/sys/class/thermal on Linux) and simulates the rest, so the example runs on any laptop.
func newSensors(thermal fs.FS) *sensors {
	temp := reader{unit: "celsius", source: "simulated", read: simulated(22.5, 0.5)}
	if z, ok := thermalZone(thermal); ok {
		temp = z
	}
	return &sensors{
		readers: map[string]reader{
			"temperature": temp,
			"humidity":    {unit: "percent", source: "simulated", read: simulated(45, 1.5)},
			"light":       {unit: "lux", source: "simulated", read: simulated(320, 10)},
		},
		hz:   10, // until the server sets another
		wait: sleep,
	}
}

// simulated cycles base, base+spread, base-spread: the mean of three readings is base, and the
// demo prints the same numbers on every run.
func simulated(base, spread float64) func() (float64, error) {
	n := 0
	return func() (float64, error) {
		n++
		return base + spread*float64(n%3-1), nil
	}
}

// thermalZone returns the first thermal zone whose temp reads (some refuse, e.g. with ENODATA).
// The kernel reports millidegrees Celsius.
func thermalZone(fsys fs.FS) (reader, bool) {
	temps, _ := fs.Glob(fsys, "thermal_zone*/temp")
	for _, p := range temps {
		read := func() (float64, error) {
			b, err := fs.ReadFile(fsys, p)
			if err != nil {
				return 0, err
			}
			milli, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
			if err != nil {
				return 0, fmt.Errorf("%s: %w", p, err)
			}
			return milli / 1000, nil
		}
		if _, err := read(); err != nil {
			continue
		}
		source := path.Dir(p)
		if typ, err := fs.ReadFile(fsys, source+"/type"); err == nil {
			source += " (" + strings.TrimSpace(string(typ)) + ")"
		}
		return reader{unit: "celsius", source: source, read: read}, true
	}
	return reader{}, false
}

// sleep waits d, or less when ctx ends first.
func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d): // an unfired timer is garbage collected since Go 1.23
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
