package max9744

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/devicectl/devicectl/hal"
	"periph.io/x/conn/v3/i2c"
)

// DefaultAddr is the address with ADDR1 and ADDR2 both high, as on
// Adafruit's breakout. The chip answers only to 0x49, 0x4A and 0x4B (both
// pins low selects analog volume control, with no I²C at all).
const DefaultAddr uint16 = 0x4B

// maxStep is the loudest volume position; the volume command is 00 followed
// by the six bits of the position.
const maxStep = 63

// Speaker is a hal.Speaker on a MAX9744. It is safe for concurrent use.
type Speaker struct {
	dev  i2c.Dev
	name string

	mu sync.Mutex
	// percent is the volume last written and acknowledged; it is meaningful
	// only while known is true.
	percent int
	known   bool
	// lastErr is why the volume is not known.
	lastErr error
}

var _ hal.Speaker = (*Speaker)(nil)

// New returns a Speaker for the amplifier at addr on bus (0 means
// DefaultAddr). It mutes the amplifier, which both checks that it answers
// and puts it in a known state: call SetVolume to make it heard.
func New(bus i2c.Bus, addr uint16) (*Speaker, error) {
	if bus == nil {
		return nil, errors.New("max9744: no I2C bus")
	}
	if addr == 0 {
		addr = DefaultAddr
	}
	name := fmt.Sprintf("max9744:%s/%#02x", bus, addr)
	if addr < 0x49 || addr > 0x4B {
		return nil, fmt.Errorf("%s: the MAX9744 answers only to 0x49, 0x4a or 0x4b", name)
	}
	s := &Speaker{dev: i2c.Dev{Bus: bus, Addr: addr}, name: name}
	if err := s.write(0); err != nil {
		return nil, fmt.Errorf("%s: no amplifier answers at address %#02x on bus %s: %w", name, addr, bus, err)
	}
	return s, nil
}

// String returns "max9744:<bus>/<address>", e.g. "max9744:I2C1/0x4b".
func (s *Speaker) String() string { return s.name }

// Halt mutes the amplifier.
func (s *Speaker) Halt() error {
	if err := s.write(0); err != nil {
		return fmt.Errorf("%s: cannot mute: %w", s, err)
	}
	return nil
}

// SetVolume writes percent, as the nearest of the chip's 64 positions.
// The context is checked before the transfer; a transfer itself takes
// well under a millisecond and cannot be interrupted.
func (s *Speaker) SetVolume(ctx context.Context, percent int) error {
	if percent < 0 || percent > 100 {
		return fmt.Errorf("%s: volume %d not in 0..100: %w", s, percent, hal.ErrOutOfRange)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", s, err)
	}
	if err := s.write(percent); err != nil {
		return fmt.Errorf("%s: cannot set the volume to %d%%: %w", s, percent, err)
	}
	return nil
}

// Volume returns the percent last written and acknowledged, the chip being
// unreadable (see the package documentation), or an error if the last
// write failed and the chip's volume is therefore unknown.
func (s *Speaker) Volume(ctx context.Context) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("%s: %w", s, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.known {
		return 0, fmt.Errorf("%s: volume unknown, the last write to the amplifier failed: %w", s, s.lastErr)
	}
	return s.percent, nil
}

// write sends percent as a volume command and records the outcome.
func (s *Speaker) write(percent int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.dev.Tx([]byte{step(percent)}, nil); err != nil {
		// The chip may or may not have taken the byte before the error.
		s.known, s.lastErr = false, err
		return err
	}
	s.percent, s.known, s.lastErr = percent, true, nil
	return nil
}

// step maps 0..100 percent to volume position 0..63, rounding halves up.
func step(percent int) byte {
	return byte((percent*maxStep + 50) / 100)
}
