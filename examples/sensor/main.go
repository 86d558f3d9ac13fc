// Command sensor is a device with tools of its own, for people who add device tools in Go: a
// read_sensor query and a set_sample_rate control, declared to an agent server by a
// device.Agent. With -demo, or without -server, it starts a stand-in server in-process, lets it
// call the tools and prints what went over the wire. The sensors themselves (a Linux thermal
// zone when there is one, simulated readings otherwise) are in sensors.go.
//
//	go run ./examples/sensor -demo
//	DEVICECTL_TOKEN=secret go run ./examples/sensor -server ws://agent.example:8080/device
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/device/agenttest"
	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
	"github.com/devicectl/devicectl/transport"
)

// defaultMAC is locally administered (bit 0x02 of the first octet), so it never clashes with
// the address of a real network card on the server's side.
const defaultMAC = "02-00-00-00-00-01"

// readInput is read_sensor's tool_input. tools.Func infers the JSON Schema the server's model sees
// from it: the json name, the Go type, the jsonschema tag as description and the tool tag's
// constraints; every field without omitempty is required.
type readInput struct {
	Sensor string `json:"sensor" jsonschema:"which sensor to read" tool:"enum=temperature|humidity|light"`
	// max=10 at 1 Hz at worst keeps one read (9 s of waiting) under the agent's 10 s tool timeout.
	Samples int `json:"samples" jsonschema:"how many readings to average, taken at the device's sample rate" tool:"min=1,max=10"`
	// omitempty makes unit optional: a model that leaves it out gets celsius.
	Unit string `json:"unit,omitempty" jsonschema:"unit of temperature readings (default celsius); ignored for other sensors" tool:"enum=celsius|fahrenheit"`
}

// readResult is read_sensor's result. A typed result gives the model named fields to quote, and
// Source tells the user whether the number came from real hardware.
type readResult struct {
	Sensor   string    `json:"sensor"`
	Value    float64   `json:"value"` // the mean of Readings
	Unit     string    `json:"unit"`
	Readings []float64 `json:"readings"`
	Source   string    `json:"source"` // "simulated", or the thermal zone read
}

type rateInput struct {
	Hz int `json:"hz" jsonschema:"readings per second" tool:"min=1,max=50"`
}

type rateResult struct {
	Status     string `json:"status"`
	Hz         int    `json:"hz"`
	PreviousHz int    `json:"previous_hz"`
}

// read is read_sensor's handler. The registry validated in against the schema first, so sensor,
// samples (1..10) and unit hold allowed values; an error here is a hardware failure (-32000).
func (s *sensors) read(ctx context.Context, in readInput) (readResult, error) {
	r, ok := s.readers[in.Sensor]
	if !ok {
		return readResult{}, fmt.Errorf("this device has no %s sensor", in.Sensor)
	}
	res := readResult{Sensor: in.Sensor, Unit: r.unit, Source: r.source}
	var sum float64
	for i := range in.Samples {
		if i > 0 {
			// Honour ctx: the agent cancels it at its tool timeout and when it stops.
			if err := s.wait(ctx, time.Second/time.Duration(s.hz)); err != nil {
				return readResult{}, err
			}
		}
		v, err := r.read()
		if err != nil {
			return readResult{}, fmt.Errorf("reading the %s sensor: %w", in.Sensor, err)
		}
		if r.unit == "celsius" && in.Unit == "fahrenheit" {
			v, res.Unit = v*9/5+32, "fahrenheit"
		}
		v = round2(v)
		res.Readings = append(res.Readings, v)
		sum += v
	}
	res.Value = round2(sum / float64(len(res.Readings)))
	return res, nil
}

// setRate is set_sample_rate's handler: it changes how far apart read's samples are.
func (s *sensors) setRate(_ context.Context, in rateInput) (rateResult, error) {
	prev := s.hz
	s.hz = in.Hz
	return rateResult{Status: "success", Hz: in.Hz, PreviousHz: prev}, nil
}

// round2 keeps float noise (69.80000000000001) out of what the model reads.
func round2(v float64) float64 { return math.Round(v*100) / 100 }

// newRegistry declares the tools. tools.Func and Registry.Add check each definition (name,
// description, tags, schema) here, so a mistake fails at startup, not on the server's first call.
func newRegistry(s *sensors) (*tools.Registry, error) {
	read, err := tools.Func(tools.Declaration{
		Name:        "read_sensor",
		Description: "Read the device's temperature, relative humidity or ambient light sensor; use it when the user asks how warm, humid or bright it is here.",
		MainType:    tools.Remote,
		SubType:     tools.Query, // the server waits and hands the result to the model
	}, s.read)
	if err != nil {
		return nil, err
	}
	rate, err := tools.Func(tools.Declaration{
		Name:        "set_sample_rate",
		Description: "Set how many readings per second the device's sensors take when averaging.",
		MainType:    tools.Remote,
		SubType:     tools.Control, // it changes the device; the server need not wait
	}, s.setRate)
	if err != nil {
		return nil, err
	}
	// One resource for both: a rate change never lands in the middle of a read (it waits for
	// the read to finish), while tools on other resources keep running alongside.
	read.Resources = []string{"sensor"}
	rate.Resources = []string{"sensor"}
	reg := tools.NewRegistry()
	for _, t := range []*tools.Tool{read, rate} {
		if err := reg.Add(t); err != nil {
			return nil, err
		}
	}
	return reg, nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "sensor:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("sensor", flag.ContinueOnError)
	fl.SetOutput(stderr)
	server := fl.String("server", "", "agent server, ws://host:port/path or wss://...; empty runs the demo")
	mac := fl.String("mac", defaultMAC, "MAC address the device registers with")
	demo := fl.Bool("demo", false, "call the tools from an in-process stand-in server, print the exchange and exit")
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	reg, err := newRegistry(newSensors(os.DirFS("/sys/class/thermal")))
	if err != nil {
		return err
	}
	if *demo || *server == "" {
		return runDemo(ctx, reg, *mac, stdout, stderr)
	}
	agent, err := device.New(&device.Options{
		URL:      *server,
		MAC:      *mac,
		Registry: reg,
		Logger:   slog.New(slog.NewTextHandler(stderr, nil)),
		// A token is a secret: a flag would show it to every user of the board in ps. (A real
		// device also sends a Client-Id kept across restarts: see device.LoadClientID.)
		Dial: &transport.DialOptions{Token: os.Getenv("DEVICECTL_TOKEN")},
	})
	if err != nil {
		return err
	}
	// Run reconnects with back-off until ctx ends, then drains calls and closes with 1000: nil.
	return agent.Run(ctx)
}

// demoCalls are what the stand-in server asks for: three good calls, then two that the registry
// refuses with -32602 before any handler runs.
var demoCalls = []struct{ tool, input string }{
	{"read_sensor", `{"sensor":"temperature","samples":3,"unit":"fahrenheit"}`},
	{"set_sample_rate", `{"hz":20}`},
	{"read_sensor", `{"sensor":"light","samples":2}`},
	{"read_sensor", `{"sensor":"humidity","samples":50}`},
	{"read_sensor", `{"sensor":"temperature","samples":1,"unit":"kelvin"}`},
}

// runDemo connects the agent to an in-process agenttest server over loopback WebSocket, the
// same stack as with a real server, and prints the registration and each call's answer.
func runDemo(ctx context.Context, reg *tools.Registry, mac string, stdout, stderr io.Writer) (err error) {
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv, err := agenttest.Start(&agenttest.Options{Logger: log})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, srv.Close()) }()
	agent, err := device.New(&device.Options{URL: srv.URL(), MAC: mac, Registry: reg, Logger: log})
	if err != nil {
		return err
	}
	runCtx, stopAgent := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- agent.Run(runCtx) }()
	// Deferred after srv.Close, so it runs first: the device closes its line (1000) itself
	// rather than see the server vanish and start backing off.
	defer func() { stopAgent(); err = errors.Join(err, <-done) }()

	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	d, err := srv.WaitDevice(wait, "")
	if err != nil {
		return interrupted(ctx, err)
	}
	decl, err := json.MarshalIndent(protocol.RegisterParams[[]tools.Declaration]{MAC: d.MAC, Tools: d.Tools}, "", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "device %s registered with %s; mcp/registerTools params as received:\n%s\n", d.MAC, srv.URL(), decl)
	for _, c := range demoCalls {
		fmt.Fprintf(stdout, "\nserver: %s %s\n", c.tool, c.input)
		resp, err := d.Execute(ctx, c.tool, json.RawMessage(c.input))
		if err != nil {
			return interrupted(ctx, err)
		}
		out, err := json.Marshal(resp)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "device: %s\n", out)
	}
	return nil
}

// interrupted turns the error of a wait that Ctrl-C cut short into a clean exit.
func interrupted(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}
