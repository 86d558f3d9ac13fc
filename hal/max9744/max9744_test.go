package max9744

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/internal/testing/halconform"
	"periph.io/x/conn/v3/i2c/i2ctest"
)

// mute is the probe New writes: volume position 0.
var mute = i2ctest.IO{Addr: DefaultAddr, W: []byte{0x00}}

func closeBus(t *testing.T, bus *i2ctest.Playback) {
	t.Helper()
	if err := bus.Close(); err != nil {
		t.Error(err)
	}
}

func TestNewMutes(t *testing.T) {
	for _, addr := range []uint16{0, 0x49, 0x4A, 0x4B} {
		want := addr
		if want == 0 {
			want = 0x4B
		}
		bus := &i2ctest.Playback{Ops: []i2ctest.IO{{Addr: want, W: []byte{0x00}}}}
		s, err := New(bus, addr)
		if err != nil {
			t.Fatal(err)
		}
		closeBus(t, bus)
		if v, err := s.Volume(context.Background()); err != nil || v != 0 {
			t.Errorf("Volume() after New = %d, %v; want 0", v, err)
		}
	}
}

func TestString(t *testing.T) {
	bus := &i2ctest.Playback{Ops: []i2ctest.IO{{Addr: 0x4A, W: []byte{0x00}}}}
	s, err := New(bus, 0x4A)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.String(), "max9744:playback/0x4a"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// Exact bytes for the ends, the middle and the rounding either side of a
// half.
func TestSetVolumeBytes(t *testing.T) {
	tests := []struct {
		percent int
		b       byte
	}{
		{100, 63}, // the loudest
		{50, 32},  // 31.5 rounds up
		{1, 1},    // 0.63: the quietest audible step, not mute
		{2, 1},    // 1.26
		{63, 40},  // 39.69: the chip's power-up position
		{99, 62},  // 62.37
		{0, 0},    // mute
	}
	ops := []i2ctest.IO{mute}
	for _, tt := range tests {
		ops = append(ops, i2ctest.IO{Addr: DefaultAddr, W: []byte{tt.b}})
	}
	bus := &i2ctest.Playback{Ops: ops}
	defer closeBus(t, bus)
	s, err := New(bus, DefaultAddr)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tt := range tests {
		if err := s.SetVolume(ctx, tt.percent); err != nil {
			t.Fatalf("SetVolume(%d): %v", tt.percent, err)
		}
		if v, err := s.Volume(ctx); err != nil || v != tt.percent {
			t.Errorf("Volume() after SetVolume(%d) = %d, %v", tt.percent, v, err)
		}
	}
}

// Every percent: the byte on the bus is the nearest position, positions
// never go down as percent goes up, all 64 are used, and the volume reads
// back as the percent set.
func TestEveryPercent(t *testing.T) {
	ops := []i2ctest.IO{mute}
	for p := 0; p <= 100; p++ {
		want := byte(math.Round(float64(p) * 63 / 100))
		ops = append(ops, i2ctest.IO{Addr: DefaultAddr, W: []byte{want}})
	}
	bus := &i2ctest.Playback{Ops: ops}
	defer closeBus(t, bus)
	s, err := New(bus, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	used := map[byte]bool{}
	prev := byte(0)
	for p := 0; p <= 100; p++ {
		if err := s.SetVolume(ctx, p); err != nil {
			t.Fatalf("SetVolume(%d): %v", p, err)
		}
		if v, err := s.Volume(ctx); err != nil || v != p {
			t.Errorf("Volume() after SetVolume(%d) = %d, %v", p, v, err)
		}
		b := bus.Ops[bus.Count-1].W[0]
		if b&0xC0 != 0 {
			t.Errorf("SetVolume(%d) wrote %#02x, not a volume command", p, b)
		}
		if b < prev {
			t.Errorf("SetVolume(%d) wrote position %d, below %d for %d%%", p, b, prev, p-1)
		}
		if d := math.Abs(float64(b)*100/63 - float64(p)); d > 100.0/63/2 {
			t.Errorf("SetVolume(%d) wrote position %d, %.2f%% away", p, b, d)
		}
		prev = b
		used[b] = true
	}
	if len(used) != 64 {
		t.Errorf("%d of the 64 positions are reachable", len(used))
	}
}

func TestHalt(t *testing.T) {
	bus := &i2ctest.Playback{Ops: []i2ctest.IO{
		mute,
		{Addr: DefaultAddr, W: []byte{45}},
		{Addr: DefaultAddr, W: []byte{0x00}},
		{Addr: DefaultAddr, W: []byte{0x00}},
	}}
	defer closeBus(t, bus)
	s, err := New(bus, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.SetVolume(ctx, 72); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := s.Halt(); err != nil {
			t.Fatal(err)
		}
	}
	if v, err := s.Volume(ctx); err != nil || v != 0 {
		t.Errorf("Volume() after Halt = %d, %v; want 0", v, err)
	}
}

func TestOutOfRangeAndCancelledWriteNothing(t *testing.T) {
	bus := &i2ctest.Playback{Ops: []i2ctest.IO{mute}}
	defer closeBus(t, bus)
	s, err := New(bus, 0)
	if err != nil {
		t.Fatal(err)
	}
	halconform.SpeakerOutOfRange(t, s)
	halconform.SpeakerCancelled(t, s)
	if v, err := s.Volume(context.Background()); err != nil || v != 0 {
		t.Errorf("Volume() = %d, %v; want 0, unchanged", v, err)
	}
}

func TestMissingAmplifier(t *testing.T) {
	tests := []struct {
		name string
		ops  []i2ctest.IO
		addr uint16
	}{
		{"nothing on the bus", nil, 0},
		{"another address answers", []i2ctest.IO{{Addr: 0x49, W: []byte{0x00}}}, 0x4B},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bus := &i2ctest.Playback{Ops: tt.ops, DontPanic: true}
			s, err := New(bus, tt.addr)
			if err == nil {
				t.Fatalf("New = %v, want an error", s)
			}
			for _, w := range []string{"no amplifier answers at address 0x4b on bus playback", "i2ctest: unexpected"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestBadArguments(t *testing.T) {
	if _, err := New(nil, 0); err == nil {
		t.Error("New(nil, 0) succeeded")
	}
	for _, addr := range []uint16{0x48, 0x4C, 0x3C} {
		bus := &i2ctest.Playback{DontPanic: true}
		_, err := New(bus, addr)
		if err == nil || !strings.Contains(err.Error(), "answers only to") {
			t.Errorf("New at %#x = %v, want an error naming the valid addresses", addr, err)
		}
		if bus.Count != 0 {
			t.Errorf("New at %#x touched the bus", addr)
		}
	}
}

// A write that fails leaves the volume unknown, and Volume says so, until
// a later write succeeds.
func TestFailedWriteMakesVolumeUnknown(t *testing.T) {
	bus := &i2ctest.Playback{DontPanic: true, Ops: []i2ctest.IO{
		mute,
		{Addr: DefaultAddr, W: []byte{0x00}}, // the Halt below; SetVolume(50)'s 32 does not match
	}}
	defer closeBus(t, bus)
	s, err := New(bus, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	err = s.SetVolume(ctx, 50)
	if err == nil || !strings.Contains(err.Error(), "max9744:playback/0x4b: cannot set the volume to 50%") {
		t.Fatalf("SetVolume(50) on a failing bus = %v, want an error naming the amplifier", err)
	}
	_, err = s.Volume(ctx)
	if err == nil || !strings.Contains(err.Error(), "volume unknown") {
		t.Errorf("Volume() after a failed write = %v, want a volume-unknown error", err)
	}
	if err := s.Halt(); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Volume(ctx); err != nil || v != 0 {
		t.Errorf("Volume() after a good Halt = %d, %v; want 0", v, err)
	}
	if err := s.Halt(); err == nil || !strings.Contains(err.Error(), "cannot mute") {
		t.Errorf("Halt on a failing bus = %v, want an error", err)
	}
}
