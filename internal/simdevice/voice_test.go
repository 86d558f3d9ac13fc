//go:build !devicectl_omit_serve || !devicectl_omit_sim

package simdevice_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os/exec"
	"testing"
	"time"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpiotest"

	"github.com/devicectl/devicectl/agent/hub"
	"github.com/devicectl/devicectl/agent/server"
	"github.com/devicectl/devicectl/hal/mic"
	"github.com/devicectl/devicectl/internal/config"
	devhw "github.com/devicectl/devicectl/internal/hardware"
	"github.com/devicectl/devicectl/internal/simdevice"
	"github.com/devicectl/devicectl/internal/testing/flite"
	"github.com/devicectl/devicectl/internal/testing/pulsetest"
)

// Push to talk, end to end: the device listens on a PulseAudio sink's monitor with a button
// (periph's gpiotest); what flite says while the button is up is not sent, what it says while
// the button is held is transcribed by the server (pocketsphinx) and sets the volume.
func TestHearButton(t *testing.T) {
	for _, p := range [][2]string{{"pocketsphinx_continuous", "pocketsphinx pocketsphinx-en-us"}, {"flite", "flite"}, {"sox", "sox"}, {"paplay", "pulseaudio-utils"}, {"parec", "pulseaudio-utils"}} {
		pulsetest.Need(t, p[0], p[1])
	}
	pulsetest.Start(t, "mic")
	c := config.Defaults()
	c.Agent.StateDir = t.TempDir()
	srv, err := server.New(&server.Options{Config: c})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		if err := errors.Join(srv.Close(), <-served); err != nil {
			t.Error(err)
		}
	}()
	events, unsubscribe := srv.Hub.Subscribe(0)
	defer unsubscribe()

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	volumes := make(chan int, 16)
	dev, err := simdevice.Start(ctx, c, "ws://"+ln.Addr().String()+"/", "02-00-00-00-00-43", "test",
		&devhw.SimHooks{OnVolume: func(v int) { volumes <- v }}, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	pin := &gpiotest.Pin{N: "GPIO17", EdgesChan: make(chan gpio.Level)}
	if err := dev.Hear(ctx, &simdevice.HearOptions{Mic: mic.Config{Driver: mic.DriverPulse, Device: "mic.monitor"}, VAD: c.Voice.VAD, Button: pin, Lang: "en"}); err != nil {
		t.Fatal(err)
	}
	say := func(text string) {
		t.Helper()
		wav := flite.Say(t, flite.Speech{Text: text, Voice: "slt", Lead: 0.3, Trail: 0.3})
		if out, err := exec.Command("paplay", "-d", "mic", wav).CombinedOutput(); err != nil {
			t.Fatalf("paplay: %v %s", err, out)
		}
	}
	say("set the volume to seventy five") // the button is up: not heard
	pin.EdgesChan <- gpio.Low
	say("set the volume to thirty")
	pin.EdgesChan <- gpio.High
	for heard := false; !heard; {
		select {
		case e := <-events:
			if e.Kind != hub.Heard {
				continue
			}
			if e.Text != "set the volume to thirty" {
				t.Fatalf("the server heard %q first; want only what was said while the button was held", e.Text)
			}
			heard = true
		case <-ctx.Done():
			t.Fatal("the server heard nothing")
		}
	}
	for v := 0; v != 30; {
		select {
		case v = <-volumes:
		case <-ctx.Done():
			t.Fatalf("the volume is %d; want 30", v)
		}
	}
}
