package alsa_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/devicectl/devicectl/hal/alsa"
)

// Through PulseAudio, on a machine with libasound2-plugins.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	spk, err := alsa.New(ctx, &alsa.Options{Device: "pulse", Control: "Master"})
	if err != nil {
		log.Fatal(err) // e.g. alsa:pulse/Master: cannot open control "Master" on device "pulse": ...
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
