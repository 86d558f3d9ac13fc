package simdevice_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/devicectl/devicectl/device/agenttest"
	"github.com/devicectl/devicectl/internal/config"
	devhw "github.com/devicectl/devicectl/internal/hardware"
	"github.com/devicectl/devicectl/internal/simdevice"
	"github.com/devicectl/devicectl/internal/testing/leakcheck"
)

// Start returns once the server has the device's tools; its hooks see what the server's calls do,
// and Close stops the agent and leaves nothing running.
func TestStartCallClose(t *testing.T) {
	leakcheck.Check(t)
	srv, err := agenttest.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	volumes := make(chan int, 16)
	const mac = "02-00-00-00-00-42"
	dev, err := simdevice.Start(ctx, config.Defaults(), srv.URL(), mac, "test",
		&devhw.SimHooks{OnVolume: func(v int) { volumes <- v }}, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if dev.MAC != mac || dev.Tools != 3 {
		t.Errorf("device %s with %d tools, want %s with the 3 built-in ones", dev.MAC, dev.Tools, mac)
	}
	seen, err := srv.WaitDevice(ctx, mac)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := seen.Execute(ctx, "amplify_volume", json.RawMessage(`{"level":42}`))
	if err != nil || resp.Error != nil {
		t.Fatalf("amplify_volume: %+v %v", resp, err)
	}
	for v := range volumes {
		if v == 42 {
			break
		}
		if len(volumes) == 0 {
			t.Fatalf("the simulated speaker went to %d, want 42", v)
		}
	}
	if err := dev.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// A server that never answers the registration makes Start give up when its context ends, and
// say so, instead of returning a device that is not registered.
func TestStartWithoutServer(t *testing.T) {
	leakcheck.Check(t)
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	_, err := simdevice.Start(ctx, config.Defaults(), "ws://127.0.0.1:1/", "02-00-00-00-00-43", "test", nil, nil, slog.New(slog.DiscardHandler))
	if err == nil {
		t.Fatal("Start with no server returned a device")
	}
}
