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
// over loopback, in one process: `devicectl call` drives the device through it, so it shows
// exactly what a real server would get (validation, error codes, timeouts).
type local struct {
	Server *agenttest.Server
	Device *agenttest.Device // the device as the server sees it

	dev       *simDevice
	closeOnce sync.Once
	closeErr  error
}

// startLocal starts the server, then a device with c's settings on simulated hardware, and
// waits until it has registered. The device stops when ctx is cancelled or Close is called.
func startLocal(ctx context.Context, c *config.Config, mac string, log *slog.Logger) (*local, error) {
	srv, err := agenttest.Start(&agenttest.Options{Logger: log.With("component", "agentserver")})
	if err != nil {
		return nil, fmt.Errorf("starting the stand-in server: %w", err)
	}
	dev, err := startSimDevice(ctx, c, srv.URL(), mac, nil, nil, log)
	if err != nil {
		return nil, errors.Join(err, srv.Close())
	}
	l := &local{Server: srv, dev: dev}
	waitCtx, cancel := context.WithTimeout(ctx, registerWait)
	defer cancel()
	if l.Device, err = srv.WaitDevice(waitCtx, mac); err != nil {
		return nil, errors.Join(fmt.Errorf("the device did not register: %w", err), l.Close())
	}
	return l, nil
}

// Close stops the device, then the server.
func (l *local) Close() error {
	l.closeOnce.Do(func() {
		l.closeErr = errors.Join(l.dev.Close(), l.Server.Close())
	})
	return l.closeErr
}

// simDevice is a device agent with simulated hardware, as `devicectl run --hardware sim` runs
// it, in this process.
type simDevice struct {
	MAC   string
	Tools int // how many tools it declared

	hw        *devhw.Hardware
	cancel    context.CancelFunc
	done      chan error // the agent's Run result
	closeOnce sync.Once
	closeErr  error
}

// startSimDevice starts a device agent with c's settings on simulated hardware (hooks observe
// it; nil for none) that dials url, and waits until the server has answered its registration.
// The agent stops when ctx is cancelled or Close is called.
func startSimDevice(ctx context.Context, c *config.Config, url, mac string, hooks *devhw.SimHooks, render func(device.AIMessage), log *slog.Logger) (*simDevice, error) {
	hw := devhw.Sim(hooks)
	var state atomic.Int32 // the agent's latest state, for get_device_status
	registered := make(chan struct{})
	var once sync.Once
	reg, err := devhw.NewRegistry(hw, c, buildVersion(), func() string { return device.State(state.Load()).String() })
	if err != nil {
		return nil, err
	}
	cfg := *c
	cfg.Server.URL = url
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
		return nil, errors.Join(err, hw.Halt())
	}
	runCtx, cancel := context.WithCancel(ctx)
	d := &simDevice{MAC: mac, Tools: len(reg.Declarations()), hw: hw, cancel: cancel, done: make(chan error, 1)}
	go func() { d.done <- agent.Run(runCtx) }()

	waitCtx, cancelWait := context.WithTimeout(ctx, registerWait)
	defer cancelWait()
	select {
	case <-registered:
		return d, nil
	case err = <-d.done:
		d.done <- err // for Close
		if err == nil {
			err = ctx.Err()
		}
	case <-waitCtx.Done():
		err = waitCtx.Err()
	}
	return nil, errors.Join(fmt.Errorf("the device did not register: %w", err), d.Close())
}

// Close stops the agent gracefully (it drains its calls and closes its line) and halts the
// simulated hardware.
func (d *simDevice) Close() error {
	d.closeOnce.Do(func() {
		d.cancel()
		d.closeErr = errors.Join(<-d.done, d.hw.Halt())
	})
	return d.closeErr
}
