package pulse_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/devicectl/devicectl/hal/pulse"
)

// PipeWire through WirePlumber; leave Tool empty for pactl.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	spk, err := pulse.New(ctx, &pulse.Options{Tool: pulse.ToolWpctl})
	if err != nil {
		log.Fatal(err)
	}
	defer spk.Halt()
	if err := spk.SetVolume(ctx, 40); err != nil {
		log.Fatal(err)
	}
	v, err := spk.Volume(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(spk, v)
}
