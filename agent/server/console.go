//go:build !devicectl_omit_serve || !devicectl_omit_sim

package server

import (
	"context"
	"encoding/json"
	"iter"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/agent/hub"
	"github.com/devicectl/devicectl/internal/console"
)

// Console is the server as the console drives it.
func (s *Server) Console() console.Server { return consoleServer{s} }

type consoleServer struct{ s *Server }

func consoleDevice(d hub.Device) console.Device {
	return console.Device{MAC: d.MAC, Tools: d.Tools, Addr: d.RemoteAddr}
}

func (c consoleServer) Devices() []console.Device {
	devs := c.s.Hub.Devices()
	out := make([]console.Device, len(devs))
	for i, d := range devs {
		out[i] = consoleDevice(d)
	}
	return out
}

// WaitDevice subscribes before it looks, so a registration between the two is not missed.
func (c consoleServer) WaitDevice(ctx context.Context, mac string) (console.Device, error) {
	events, stop := c.s.Hub.Subscribe(0)
	defer stop()
	for _, d := range c.s.Hub.Devices() {
		if mac == "" || d.MAC == mac {
			return consoleDevice(d), nil
		}
	}
	for {
		select {
		case e, ok := <-events:
			if !ok {
				return console.Device{}, hub.ErrClosed
			}
			if e.Kind == hub.Registered && (mac == "" || e.Device.MAC == mac) {
				return consoleDevice(e.Device), nil
			}
		case <-ctx.Done():
			return console.Device{}, ctx.Err()
		}
	}
}

// Call returns the device's answer frame as received.
func (c consoleServer) Call(ctx context.Context, mac, tool string, input json.RawMessage) (json.RawMessage, error) {
	resp, err := c.s.Hub.CallRaw(ctx, mac, tool, input)
	if err != nil {
		return nil, err
	}
	return resp.Raw, nil
}

// Say streams text to the device as a few chunks, then the final, as a planner's reply goes.
// Say is the console's say: an announcement, on the same path as the announce tool and POST
// /announce (a final the device shows and speaks, with no turn).
func (c consoleServer) Say(_ context.Context, mac, text string) error {
	return hubDevices{c.s.Hub}.Say(mac, text)
}

// Forget frees a MAC bound to a device's Client-Id (the console's forget).
func (c consoleServer) Forget(ctx context.Context, mac string) (bool, error) {
	return c.s.Hub.Forget(ctx, mac)
}

func (c consoleServer) Turn(ctx context.Context, r agent.Request) iter.Seq[agent.Event] {
	return c.s.Agent.Turn(ctx, r)
}

// WatchDevices shows devices on the console as they register and disconnect, until ctx is done
// or the returned stop is called; stop waits for the goroutine that shows them.
func (s *Server) WatchDevices(ctx context.Context, con *console.Console) (stop func()) {
	events, unsubscribe := s.Hub.Subscribe(0)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case e, ok := <-events:
				if !ok {
					return
				}
				switch e.Kind {
				case hub.Registered:
					con.Event(console.Registered, consoleDevice(e.Device))
				case hub.Disconnected:
					con.Event(console.Disconnected, consoleDevice(e.Device))
				case hub.Heard:
					con.Heard(e.Device.MAC, e.Text, e.Source)
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return func() {
		cancel()
		<-done
		unsubscribe()
	}
}
