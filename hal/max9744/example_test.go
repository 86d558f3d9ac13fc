package max9744_test

import (
	"context"
	"fmt"
	"log"

	"github.com/devicectl/devicectl/hal/max9744"
	"periph.io/x/conn/v3/i2c/i2ctest"
)

func Example() {
	// On a board: host.Init(), then i2creg.Open("") for the bus.
	bus := &i2ctest.Playback{Ops: []i2ctest.IO{
		{Addr: 0x4B, W: []byte{0x00}}, // New mutes
		{Addr: 0x4B, W: []byte{40}},   // 63% is position 40
		{Addr: 0x4B, W: []byte{0x00}}, // Halt mutes
	}}
	amp, err := max9744.New(bus, max9744.DefaultAddr)
	if err != nil {
		log.Fatal(err)
	}
	defer amp.Halt()
	ctx := context.Background()
	if err := amp.SetVolume(ctx, 63); err != nil {
		log.Fatal(err)
	}
	v, _ := amp.Volume(ctx)
	fmt.Println(amp, v)
	// Output: max9744:playback/0x4b 63
}
