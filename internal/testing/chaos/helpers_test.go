package chaos_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/internal/sleep"
	"github.com/devicectl/devicectl/internal/testing/chaos"
	"github.com/devicectl/devicectl/internal/testing/devicerun"
	"github.com/devicectl/devicectl/internal/testing/leakcheck"
	"github.com/devicectl/devicectl/tools"
	"github.com/devicectl/devicectl/transport"
)

// The agent's settings in every chaos test, small so that a run sees many faults and recoveries.
const (
	testMAC         = "02-C4-A0-50-00-01"
	maxInFlight     = 4
	backoffMin      = 10 * time.Millisecond
	backoffMax      = 100 * time.Millisecond
	pingInterval    = 250 * time.Millisecond
	pingTimeout     = time.Second
	registerTimeout = 400 * time.Millisecond
	toolTimeout     = 2 * time.Second
	// margin is what every bound allows beyond the agent's own settings: scheduling on two busy
	// cores under the race detector, a GC, a slow handshake. It is far below anything that
	// would hide a device that does not recover at all, or waits a whole back-off cap too long.
	margin = 2 * time.Second
)

// bounds are the ledger's limits, derived from the settings above.
func bounds() chaos.Bounds {
	return chaos.Bounds{
		Due:        toolTimeout + 100*time.Millisecond + margin, // a stuck tool is answered -32001 just after its timeout
		Reregister: backoffMax + margin,
		Register:   registerTimeout + margin,
		Stall:      pingInterval + pingTimeout + margin,
		BackoffMin: backoffMin,
		BackoffMax: backoffMax,
	}
}

// checkLeaks fails the test if goroutines it started outlive the agent and server (invariant 4);
// register it first.
func checkLeaks(t *testing.T) { leakcheck.Check(t) }

// gates hold the hold tool's calls running until the test releases them: the call's input names
// its gate. A gate counts the calls that started on it.
type gates struct {
	led  *chaos.Ledger // woken when a call starts, so tests can wait for it
	mu   sync.Mutex
	m    map[int64]*gate
	next int64
}

type gate struct {
	id      int64
	started atomic.Int32
	open    chan struct{}
	once    sync.Once
}

func (g *gate) release() { g.once.Do(func() { close(g.open) }) }

func newGates(led *chaos.Ledger) *gates { return &gates{led: led, m: make(map[int64]*gate)} }

func (gs *gates) new() *gate {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.next++
	g := &gate{id: gs.next, open: make(chan struct{})}
	gs.m[g.id] = g
	return g
}

func (gs *gates) get(id int64) *gate {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	g, ok := gs.m[id]
	if !ok { // a gate nobody made: open, so the call does not hang
		g = &gate{id: id, open: make(chan struct{})}
		g.release()
		gs.m[id] = g
	}
	return g
}

// releaseAll opens every gate, so no call is left waiting when the agent stops.
func (gs *gates) releaseAll() {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	for _, g := range gs.m {
		g.release()
	}
}

// parts are the two ways a device runs its calls, and the chaos tests run on both: tools that may
// block, as a board's parts are (a call runs on the line's reader, watched, or on a worker), and
// instant tools, as --hardware sim's parts are (tools.Tool.Inline: run on the reader, unwatched).
var parts = []struct {
	name    string
	instant bool
}{{"board", false}, {"instant", true}}

// chaosRegistry declares the tools the chaos server calls: echo (returns its input, decoded as a
// real tool would), fail (a domain failure, -32000) and hold (runs until its gate opens or its
// context ends). instant declares echo and fail instant (hold blocks: never). invoked, when not
// nil, counts every tool call that started.
func chaosRegistry(t testing.TB, gs *gates, invoked *atomic.Int64, instant bool) *tools.Registry {
	t.Helper()
	count := func() {
		if invoked != nil {
			invoked.Add(1)
		}
	}
	reg := tools.NewRegistry()
	add := func(name string, schema *jsonschema.Schema, fn tools.Handler) {
		t.Helper()
		decl := tools.Declaration{Name: name, Description: "chaos test tool " + name, MainType: tools.Remote, SubType: tools.Query, Parameters: schema}
		if err := reg.Add(&tools.Tool{Declaration: decl, Handler: fn, Inline: instant && name != "hold"}); err != nil {
			t.Fatal(err)
		}
	}
	add(chaos.EchoTool, &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"n": {Type: "integer"},
		"s": {Type: "string"},
	}}, func(_ context.Context, in json.RawMessage) (any, error) {
		count()
		var v map[string]any
		if err := json.Unmarshal(in, &v); err != nil {
			return nil, fmt.Errorf("cannot read the input: %w", err)
		}
		return v, nil
	})
	add("fail", &jsonschema.Schema{Type: "object"}, func(context.Context, json.RawMessage) (any, error) {
		count()
		return nil, errors.New("执行失败：chaos")
	})
	if gs != nil {
		add("hold", &jsonschema.Schema{Type: "object", Required: []string{"gate"}, Properties: map[string]*jsonschema.Schema{
			"gate": {Type: "integer"},
		}}, func(ctx context.Context, in json.RawMessage) (any, error) {
			count()
			var p struct{ Gate int64 }
			if err := json.Unmarshal(in, &p); err != nil {
				return nil, err
			}
			g := gs.get(p.Gate)
			g.started.Add(1)
			gs.led.Wake()
			select {
			case <-g.open:
				return "released", nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
	}
	return reg
}

// agentOptions are the chaos settings for an agent serving reg against url, reporting to led.
func agentOptions(url string, reg *tools.Registry, led *chaos.Ledger) *device.Options {
	return &device.Options{
		URL:      url,
		MAC:      testMAC,
		Registry: reg,
		Render:   led.Render,
		Dial: &transport.DialOptions{
			PingInterval:     pingInterval,
			PingTimeout:      pingTimeout,
			HandshakeTimeout: 2 * time.Second,
			WriteTimeout:     2 * time.Second,
		},
		MaxInFlight:     maxInFlight,
		MaxQueued:       -1, // flood checks the refusals past MaxInFlight; device's order tests cover the queue
		ToolTimeout:     toolTimeout,
		DrainTimeout:    time.Second,
		RegisterTimeout: registerTimeout,
		Backoff:         device.Backoff{Min: backoffMin, Max: backoffMax, ResetAfter: 2 * time.Second},
		// A real wait, so that back-off timing is what the device lives with, and a record of
		// every wait for the ledger's hot-loop check.
		Sleep: func(ctx context.Context, d time.Duration) error {
			led.BackoffWait(d)
			return sleep.For(ctx, d)
		},
		OnLineLost: led.DeviceLineLost,
		Logger:     testLogger(),
	}
}

// testLogger logs to stderr at the level CHAOS_LOG names (debug, info, warn, error); by default
// nothing: a chaos run logs thousands of expected warnings.
func testLogger() *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(os.Getenv("CHAOS_LOG"))); err != nil || os.Getenv("CHAOS_LOG") == "" {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// runAgent starts an agent and returns a func that stops it and waits for Run to return.
func runAgent(t *testing.T, opts *device.Options, led *chaos.Ledger) (stop func()) {
	t.Helper()
	a, err := device.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	run := devicerun.Start(t, a)
	var once sync.Once
	stop = func() {
		once.Do(func() {
			if led != nil {
				led.Stopping()
			}
			run()
		})
	}
	t.Cleanup(stop) // runs before devicerun's own, so the ledger hears of the stop first
	return stop
}

// envDuration reads a duration from the environment, or returns def.
func envDuration(t testing.TB, name string, def time.Duration) time.Duration {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		t.Fatalf("%s=%q: want a positive duration such as 30s", name, s)
	}
	return d
}

// envInt reads a positive integer from the environment (underscores allowed), or returns def.
func envInt(t testing.TB, name string, def int64) int64 {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, 64)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return n
}

func startServer(t *testing.T, led *chaos.Ledger) *chaos.Server {
	t.Helper()
	srv, err := chaos.Start(&chaos.Options{Ledger: led})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}
