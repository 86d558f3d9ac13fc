package toolcall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"strings"
	"time"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/hal/driverreg"
	"github.com/devicectl/devicectl/hal/hostbus"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/control"
	"github.com/devicectl/devicectl/internal/hardware"
)

// Options say where and how to run a call.
type Options struct {
	Config  *config.Config
	Getenv  func(string) string // the environment (the runtime directory); nil: no variables
	Version string              // reported by get_device_status on local parts
	Logger  *slog.Logger        // nil: discarded
	// Notice, when set, is told in a line when no daemon answered and the call runs on parts of
	// its own: a person who expected the running daemon's must not mistake the one for the other.
	Notice io.Writer
}

// Run runs tool with input on the daemon when one serves a control socket the config names,
// else on the parts it configures. The device's answer, an error included, is the Response; an
// error is returned only when no answer could be had.
func Run(ctx context.Context, o *Options, tool string, input json.RawMessage) (*control.Response, error) {
	opts := *o
	if opts.Getenv == nil {
		opts.Getenv = func(string) string { return "" }
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	o = &opts
	getenv := o.Getenv
	resp, err := daemon(ctx, o.Config, getenv, tool, input, o.Logger)
	if !errors.Is(err, control.ErrNoDaemon) {
		return resp, err
	}
	o.Logger.Debug("no daemon; opening the parts", "hardware", o.Config.Hardware.Mode)
	if o.Notice != nil {
		fmt.Fprintf(o.Notice, "devicectl call: no running daemon answered (%v); running %s on %s parts of its own, not the daemon's\n", err, tool, partsOf(o.Config))
	}
	res, err := local(ctx, o, tool, input)
	var ce *device.CallError
	switch {
	case errors.As(err, &ce): // the device's answer, as the server would have it
		return &control.Response{Error: control.ErrorOf(ce)}, nil
	case err != nil:
		return nil, err
	}
	return &control.Response{Result: res}, nil
}

// daemon sends the call to the first control socket a daemon serves. An error wrapping
// control.ErrNoDaemon means none does.
func daemon(ctx context.Context, c *config.Config, getenv func(string) string, tool string, input json.RawMessage, log *slog.Logger) (*control.Response, error) {
	// The daemon answers within the tool's timeout; the margin covers a daemon that is stuck. Any
	// tool's: call does not know which timeout the daemon applies to tool.
	longest, _ := c.LongestToolTimeout()
	ctx, cancel := context.WithTimeout(ctx, longest+margin)
	defer cancel()
	paths := c.ControlSockets(getenv)
	for _, path := range paths {
		resp, err := control.Call(ctx, path, &control.Request{Tool: tool, Input: input})
		if errors.Is(err, control.ErrNoDaemon) {
			log.Debug("no daemon here", "socket", path, "err", err)
			continue
		}
		if errors.Is(err, fs.ErrPermission) {
			return nil, fmt.Errorf("%w; the daemon runs, so its parts cannot be opened here too: run call as root or as a member of the socket's group (usermod -aG devicectl USER, then log in again)", err)
		}
		if err != nil {
			return nil, err
		}
		log.Debug("called through the daemon", "socket", path)
		return resp, nil
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("control.socket is %s: %w", config.ControlOff, control.ErrNoDaemon)
	}
	return nil, fmt.Errorf("no daemon serves %s: %w", strings.Join(paths, ", "), control.ErrNoDaemon)
}

// partsOf says which parts a call without the daemon opens.
func partsOf(c *config.Config) string {
	if c.Hardware.Mode == "sim" {
		return "simulated"
	}
	return "the configured"
}

// margin is how much longer than the tool's timeout call waits for the daemon's answer.
const margin = 5 * time.Second

// unusedURL stands in for the servers in the agent local builds: that agent is never run, so it
// never dials.
const unusedURL = "ws://127.0.0.1:1/not-dialled"

// unusedMAC stands in for the device's MAC when the config has none: nothing is registered.
const unusedMAC = "00-00-00-00-00-00"

// local runs one tool on the parts the config describes when no daemon runs: it opens them, runs
// the call through a device agent's own call path (device.Agent.Call: the same schema check,
// error codes and timeout as a server's call), and releases them. The agent is never run: it
// dials nothing, and its workers exit on their own once idle.
//
// Unlike run, it leaves the parts as the call left them: the speaker keeps its level when it is
// opened (no hardware.speaker.start_volume) and is not muted at the end, and the face keeps the
// expression, so what the tool did can be seen and heard. Speech and tool sets are not opened.
func local(ctx context.Context, o *Options, tool string, input json.RawMessage) (result json.RawMessage, err error) {
	c := o.Config
	hw, release, err := openParts(ctx, c, o.Logger)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, release()) }()
	reg, err := hardware.NewRegistry(hw, c, o.Version, func() string { return "no daemon (devicectl call)" })
	if err != nil {
		return nil, err
	}
	mac := c.Device.MAC
	if mac == "" {
		mac = unusedMAC
	}
	opts := c.AgentOptions(config.AgentSettings{MAC: mac, Version: o.Version, Registry: reg, Logger: o.Logger})
	opts.URLs = []string{unusedURL}
	agent, err := device.New(opts)
	if err != nil {
		return nil, fmt.Errorf("preparing the call: %w", err)
	}
	return agent.Call(ctx, tool, input)
}

// openParts opens the speaker and the face as run does, except that the speaker keeps its level,
// and returns the function that releases their buses without halting them.
func openParts(ctx context.Context, c *config.Config, log *slog.Logger) (*hardware.Hardware, func() error, error) {
	if c.Hardware.Mode == "sim" {
		return hardware.Sim(nil), func() error { return nil }, nil
	}
	buses := &hostbus.Buses{}
	env := &driverreg.Env{Buses: buses, Logger: log}
	hw := &hardware.Hardware{}
	var err error
	// keepLevel: a speaker that can be read keeps the level it has (a running service's, a
	// person's); a blind one (MAX9744) is set to its start volume, as it must be to be known.
	if hw.Speaker, err = hardware.OpenSpeaker(ctx, c.Hardware.Speaker, env, true); err != nil {
		if !c.Hardware.Speaker.Optional {
			return nil, nil, errors.Join(err, buses.Close())
		}
		log.Warn("the speaker is missing; amplify_volume is not there (hardware.speaker.optional)", "err", err)
	}
	if hw.Face, err = hardware.OpenFace(ctx, c.Hardware.Face, env); err != nil {
		if !c.Hardware.Face.Optional {
			return nil, nil, errors.Join(err, buses.Close())
		}
		log.Warn("the face is missing; set_virtual_human_expression is not there (hardware.face.optional)", "err", err)
	}
	return hw, buses.Close, nil
}
