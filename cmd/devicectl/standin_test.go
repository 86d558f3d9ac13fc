//go:build !devicectl_omit_sim

package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/devicectl/devicectl/device/agenttest"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/simdevice"
)

// local is a stand-in agent server and a device agent with simulated hardware connected to it
// over loopback, in one process: the tests see through it exactly what a real server would get
// (TestToolsMatchesTheWire compares it with what `devicectl tools` prints).
type local struct {
	Server *agenttest.Server
	Device *agenttest.Device // the device as the server sees it

	dev       *simdevice.Device
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
	dev, err := simdevice.Start(ctx, c, srv.URL(), mac, buildVersion(), nil, nil, log)
	if err != nil {
		return nil, errors.Join(err, srv.Close())
	}
	l := &local{Server: srv, dev: dev}
	waitCtx, cancel := context.WithTimeout(ctx, simdevice.RegisterWait)
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
