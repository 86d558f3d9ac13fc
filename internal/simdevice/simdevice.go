// Package simdevice runs a device agent on simulated hardware inside the process, connected to a
// server over loopback exactly as a board's agent is: what `devicectl sim` and `devicectl call`
// talk to.
package simdevice

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/internal/config"
	devhw "github.com/devicectl/devicectl/internal/hardware"
	"github.com/devicectl/devicectl/protocol"
)

// RegisterWait bounds how long the device may take to register with a server in the same
// process; it takes milliseconds, so running out means something is broken.
const RegisterWait = 10 * time.Second

// Device is a device agent with simulated hardware, as `devicectl run --hardware sim` runs it,
// in this process.
type Device struct {
	MAC   string
	Tools int // how many tools it declared

	hw        *devhw.Hardware
	agent     *device.Agent
	hearing   *hearing // nil until Hear
	cancel    context.CancelFunc
	done      chan error // the agent's Run result
	closeOnce sync.Once
	closeErr  error
}

// Start starts a device agent with c's settings on simulated hardware (hooks observe it; nil for
// none) that dials url, and waits until the server has answered its registration. version is
// what the device reports as its own. The agent stops when ctx is cancelled or Close is called.
func Start(ctx context.Context, c *config.Config, url, mac, version string, hooks *devhw.SimHooks, render func(protocol.AIMessage), log *slog.Logger) (*Device, error) {
	hw := devhw.Sim(hooks)
	var state atomic.Int32 // the agent's latest state, for get_device_status
	registered := make(chan struct{})
	var once sync.Once
	reg, err := devhw.NewRegistry(hw, c, version, func() string { return device.State(state.Load()).String() })
	if err != nil {
		return nil, err
	}
	cfg := *c
	cfg.Server.URL = url
	agent, err := device.New(cfg.AgentOptions(config.AgentSettings{
		MAC:      mac,
		ClientID: newClientID(),
		Version:  version,
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
	d := &Device{MAC: mac, Tools: len(reg.Declarations()), hw: hw, agent: agent, cancel: cancel, done: make(chan error, 1)}
	go func() { d.done <- agent.Run(runCtx) }()

	waitCtx, cancelWait := context.WithTimeout(ctx, RegisterWait)
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
func (d *Device) Close() error {
	d.closeOnce.Do(func() {
		d.hearing.stop()
		d.cancel()
		d.closeErr = errors.Join(<-d.done, d.hw.Halt())
	})
	return d.closeErr
}

// newClientID returns a random version 4 UUID: each Start's device has a Client-Id of its own, so
// no other process can present the same one and replace its line (a fixed one could).
func newClientID() string {
	var u [16]byte
	rand.Read(u[:]) // never fails (crypto/rand)
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	h := hex.EncodeToString(u[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
