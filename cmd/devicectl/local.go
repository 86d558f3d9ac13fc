//go:build !devicectl_omit_sim

package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/device/agenttest"
	"github.com/devicectl/devicectl/internal/config"
	devhw "github.com/devicectl/devicectl/internal/hardware"
)

// registerWait bounds how long the in-process device may take to register with the in-process
// server; it takes milliseconds, so running out means something is broken.
const registerWait = 10 * time.Second

// local is a stand-in agent server and a device agent with simulated hardware connected to it
// over loopback, in one process: `devicectl sim` and `devicectl call` drive the device through
// it, so they show exactly what a real server would get (validation, error codes, timeouts,
// rendering).
type local struct {
	Server *agenttest.Server
	Device *agenttest.Device // the device as the server sees it

	hw        *devhw.Hardware
	cancel    context.CancelFunc
	done      chan error // the agent's Run result
	closeOnce sync.Once
	closeErr  error
}

// startLocal starts the server, then an agent with c's settings on simulated hardware (hooks
// observe it; nil for none), and waits until it has registered. The agent stops when ctx is
// cancelled or Close is called.
func startLocal(ctx context.Context, c *config.Config, mac string, hooks *devhw.SimHooks, render func(device.AIMessage), log *slog.Logger) (*local, error) {
	hw := devhw.Sim(hooks)
	var state atomic.Int32 // the agent's latest state, for get_device_status
	registered := make(chan struct{})
	var once sync.Once
	reg, err := devhw.NewRegistry(hw, c, buildVersion(), func() string { return device.State(state.Load()).String() })
	if err != nil {
		return nil, err
	}
	srv, err := agenttest.Start(&agenttest.Options{Logger: log.With("component", "agentserver")})
	if err != nil {
		return nil, fmt.Errorf("starting the stand-in server: %w", err)
	}
	cfg := *c
	cfg.Server.URL = srv.URL()
	agent, err := device.New(cfg.AgentOptions(config.AgentSettings{
		MAC:      mac,
		ClientID: "devicectl-local",
		Version:  buildVersion(),
		Registry: reg,
		Render:   render,
		Logger:   log,
		OnState: func(st device.State) {
			state.Store(int32(st))
			if st == device.Registered {
				once.Do(func() { close(registered) })
			}
		},
	}))
	if err != nil {
		return nil, errors.Join(err, srv.Close())
	}
	runCtx, cancel := context.WithCancel(ctx)
	l := &local{Server: srv, hw: hw, cancel: cancel, done: make(chan error, 1)}
	go func() { l.done <- agent.Run(runCtx) }()

	// Ready means both sides know: the server has the device, and the agent has the server's
	// answer (so the first call already sees the state "registered").
	waitCtx, cancelWait := context.WithTimeout(ctx, registerWait)
	defer cancelWait()
	l.Device, err = srv.WaitDevice(waitCtx, mac)
	if err == nil {
		select {
		case <-registered:
		case <-waitCtx.Done():
			err = waitCtx.Err()
		}
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("the device did not register: %w", err), l.Close())
	}
	return l, nil
}

// Close stops the agent gracefully (it drains its calls and closes its line), then the server,
// and halts the simulated hardware.
func (l *local) Close() error {
	l.closeOnce.Do(func() {
		l.cancel()
		l.closeErr = errors.Join(<-l.done, l.Server.Close(), l.hw.Halt())
	})
	return l.closeErr
}
