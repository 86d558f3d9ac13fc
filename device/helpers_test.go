package device_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/sim"
	"github.com/devicectl/devicectl/internal/testing/devicerun"
	"github.com/devicectl/devicectl/internal/testing/leakcheck"
	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
)

// seedTools is the tools array of seed 002's mcp/registerTools example, verbatim.
const seedTools = `[
  {
    "name": "amplify_volume",
    "description": "设置设备音量",
    "main_type": "remote",
    "sub_type": "control",
    "parameters": {
        "type": "object",
        "properties": {
            "level": {
                "type": "integer",
                "description": "音量大小，从0到100。0为静音，100为最大音量。"
            }
        },
        "required": ["level"]
    }
  },
  {
    "name": "set_virtual_human_expression",
    "description": "设置AI虚拟人的表情",
    "main_type": "remote",
    "sub_type": "control",
    "parameters": {
        "type": "object",
        "properties": {
            "expression": {
                "type": "string",
                "description": "要设置的表情",
                "enum": ["close_eyes_smile", "close_eyes", "amazed", "smile", "cry", "idle"]
            }
        },
        "required": ["expression"]
    }
  }
]`

// seedRegistry declares the seed's two tools exactly as the seed writes them, backed by simulated
// hardware, with result and error texts as in the seed's examples. Its schema has no range for
// level, so an out-of-range level reaches the speaker, which refuses it: the seed's -32000 case.
func seedRegistry(t testing.TB, speaker *sim.Speaker, face *sim.Face) *tools.Registry {
	t.Helper()
	var decls []tools.Declaration
	if err := json.Unmarshal([]byte(seedTools), &decls); err != nil {
		t.Fatal(err)
	}
	reg := tools.NewRegistry()
	add := func(tool *tools.Tool) {
		t.Helper()
		if err := reg.Add(tool); err != nil {
			t.Fatal(err)
		}
	}
	add(&tools.Tool{Declaration: decls[0], Resources: []string{"speaker"}, Handler: func(ctx context.Context, in json.RawMessage) (any, error) {
		var p struct{ Level int }
		if err := json.Unmarshal(in, &p); err != nil {
			return nil, err
		}
		if err := speaker.SetVolume(ctx, p.Level); err != nil {
			if errors.Is(err, hal.ErrOutOfRange) {
				return nil, errors.New("执行失败：音量级别超出范围（0-100）。")
			}
			return nil, err
		}
		v, err := speaker.Volume(ctx)
		if err != nil {
			return nil, err
		}
		return protocol.ExecuteResult{Status: "success", Message: fmt.Sprintf("音量已成功设置为 %d", v)}, nil
	}})
	add(&tools.Tool{Declaration: decls[1], Resources: []string{"face"}, Handler: func(ctx context.Context, in json.RawMessage) (any, error) {
		var p struct{ Expression hal.Expression }
		if err := json.Unmarshal(in, &p); err != nil {
			return nil, err
		}
		if err := face.SetExpression(ctx, p.Expression); err != nil {
			return nil, err
		}
		return protocol.ExecuteResult{Status: "success", Message: "表情已设置为 " + string(p.Expression)}, nil
	}})
	return reg
}

// testTool returns a tool with no parameters whose handler is fn.
func testTool(t testing.TB, name string, timeout time.Duration, resources []string, fn tools.Handler) *tools.Tool {
	t.Helper()
	schema := &jsonschema.Schema{Type: "object"}
	decl := tools.Declaration{Name: name, Description: "a tool for tests: " + name, MainType: tools.Remote, SubType: tools.Query, Parameters: schema}
	return &tools.Tool{Declaration: decl, Timeout: timeout, Resources: resources, Handler: fn}
}

// heldUntil is a tool's work that lasts until release is closed ("done") or ctx is done.
func heldUntil(ctx context.Context, release <-chan struct{}) (any, error) {
	select {
	case <-release:
		return "done", nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// addDrainedTool adds to reg a tool that closes started when it runs and answers "finished" once
// finish is closed, ignoring its context: only a drain that waits for it lets it answer.
func addDrainedTool(t testing.TB, reg *tools.Registry, name string, timeout time.Duration) (started, finish chan struct{}) {
	t.Helper()
	started, finish = make(chan struct{}), make(chan struct{})
	if err := reg.Add(testTool(t, name, timeout, nil, func(context.Context, json.RawMessage) (any, error) {
		close(started)
		<-finish
		return "finished", nil
	})); err != nil {
		t.Fatal(err)
	}
	return started, finish
}

// refusedURL is a WebSocket URL on loopback where nothing listens: every dial to it is refused at
// once.
func refusedURL(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	return "ws://" + ln.Addr().String() + "/"
}

// sleeps records the agent's back-off waits and returns at once, so tests never sleep for real.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	// Yield a little so a test server that refuses every attempt is not flooded faster than the
	// test can look; the recorded duration is what the agent asked for.
	select {
	case <-time.After(time.Millisecond):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// fakeClock is a clock the test moves by hand, for Agent.SetTestClock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// checkLeaks fails the test if goroutines it started outlive it; register it first.
func checkLeaks(t *testing.T) { leakcheck.Check(t) }

// runAgent starts a on a goroutine the test owns and returns a func that stops it and waits for
// Run to return.
func runAgent(t *testing.T, a *device.Agent) (stop func()) {
	t.Helper()
	return devicerun.Start(t, a)
}
