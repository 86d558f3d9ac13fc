package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/hal/driverreg"
	"github.com/devicectl/devicectl/hal/hostbus"
	"github.com/devicectl/devicectl/internal/config"
	devhw "github.com/devicectl/devicectl/internal/hardware"
)

// unusedURL stands in for server.url in the agent callLocal builds: that agent is never run,
// so it never dials.
const unusedURL = "ws://127.0.0.1:1/not-dialled"

// unusedMAC stands in for the device's MAC when the config has none: nothing is registered.
const unusedMAC = "00-00-00-00-00-00"

// callLocal runs one tool on the parts c configures when no daemon runs: it opens them, runs
// the call through a device agent's own call path (device.Agent.Call: the same schema check,
// error codes and timeout as a server's call), and releases them. The agent is never run: it
// dials nothing, and its workers exit on their own once idle.
//
// Unlike run, it leaves the parts as the call left them: the speaker keeps its level when it is
// opened (no hardware.speaker.start_volume) and is not muted at the end, and the face keeps the
// expression, so what the tool did can be seen and heard. Speech and tool sets are not opened.
func callLocal(ctx context.Context, c *config.Config, tool string, input json.RawMessage, log *slog.Logger) (result json.RawMessage, err error) {
	hw, release, err := openParts(ctx, c, log)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, release()) }()
	reg, err := devhw.NewRegistry(hw, c, buildVersion(), func() string { return "no daemon (devicectl call)" })
	if err != nil {
		return nil, err
	}
	mac := c.Device.MAC
	if mac == "" {
		mac = unusedMAC
	}
	opts := c.AgentOptions(config.AgentSettings{MAC: mac, Version: buildVersion(), Registry: reg, Logger: log})
	opts.URL = unusedURL
	agent, err := device.New(opts)
	if err != nil {
		return nil, fmt.Errorf("preparing the call: %w", err)
	}
	return agent.Call(ctx, tool, input)
}

// openParts opens the speaker and the face as run does, except that the speaker keeps its level,
// and returns the function that releases their buses without halting them.
func openParts(ctx context.Context, c *config.Config, log *slog.Logger) (*devhw.Hardware, func() error, error) {
	if c.Hardware.Mode == "sim" {
		return devhw.Sim(nil), func() error { return nil }, nil
	}
	buses := &hostbus.Buses{}
	env := &driverreg.Env{Buses: buses, Logger: log}
	hw := &devhw.Hardware{}
	var err error
	// keepLevel: a speaker that can be read keeps the level it has (a running service's, a
	// person's); a blind one (MAX9744) is set to its start volume, as it must be to be known.
	if hw.Speaker, err = devhw.OpenSpeaker(ctx, c.Hardware.Speaker, env, true); err != nil {
		if !c.Hardware.Speaker.Optional {
			return nil, nil, errors.Join(err, buses.Close())
		}
		log.Warn("the speaker is missing; amplify_volume is not there (hardware.speaker.optional)", "err", err)
	}
	if hw.Face, err = devhw.OpenFace(ctx, c.Hardware.Face, env); err != nil {
		if !c.Hardware.Face.Optional {
			return nil, nil, errors.Join(err, buses.Close())
		}
		log.Warn("the face is missing; set_virtual_human_expression is not there (hardware.face.optional)", "err", err)
	}
	return hw, buses.Close, nil
}
