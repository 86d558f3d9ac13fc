package hostbus

import (
	"errors"
	"fmt"
	"sync"

	periphreg "periph.io/x/conn/v3/driver/driverreg"
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

	"github.com/devicectl/devicectl/hal/driverreg"
)

// Buses opens periph's buses on first use: periph's host drivers are initialised only when a part
// on a bus is configured, so a laptop or a board with only ALSA never touches /dev/i2c-* or /dev/mem.
type Buses struct { // the zero value is ready to use
	initOnce sync.Once
	initErr  error
	closers  []interface{ Close() error }
	i2cs     map[string]i2c.Bus // by name: a speaker and a display on one bus share it
}

func (b *Buses) init() error {
	b.initOnce.Do(func() {
		if _, err := periphreg.Init(); err != nil {
			b.initErr = fmt.Errorf("initialising the host's buses (periph): %w", err)
		}
	})
	return b.initErr
}

// I2C opens the I2C bus name ("" is the first one).
func (b *Buses) I2C(name string) (i2c.Bus, error) {
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
		return nil, fmt.Errorf("opening I2C bus %s: %w (is I2C enabled, e.g. dtparam=i2c_arm=on, and is the user in the i2c group?)", driverreg.BusName(name), err)
	}
	b.closers = append(b.closers, bus)
	if b.i2cs == nil {
		b.i2cs = map[string]i2c.Bus{}
	}
	b.i2cs[name] = bus
	return bus, nil
}

// SPI opens the SPI port name ("" is the first one).
func (b *Buses) SPI(name string) (spi.Port, error) {
	if err := b.init(); err != nil {
		return nil, err
	}
	if len(spireg.All()) == 0 {
		return nil, errors.New("this machine has no SPI port (nothing under /dev/spidev*): is SPI enabled, e.g. dtparam=spi=on in config.txt?")
	}
	port, err := spireg.Open(name)
	if err != nil {
		return nil, fmt.Errorf("opening SPI port %s: %w (is SPI enabled, e.g. dtparam=spi=on, and is the user in the spi group?)", driverreg.BusName(name), err)
	}
	b.closers = append(b.closers, port)
	return port, nil
}

// Pin returns the GPIO called name, e.g. GPIO25.
func (b *Buses) Pin(name string) (gpio.PinIO, error) {
	if err := b.init(); err != nil {
		return nil, err
	}
	p := gpioreg.ByName(name)
	if p == nil {
		return nil, fmt.Errorf("no GPIO called %q on this board", name)
	}
	return p, nil
}

// Close closes what was opened, last first.
func (b *Buses) Close() error {
	var errs []error
	for i := len(b.closers) - 1; i >= 0; i-- {
		errs = append(errs, b.closers[i].Close())
	}
	b.closers = nil
	return errors.Join(errs...)
}
