//go:build !devicectl_omit_serve || !devicectl_omit_sim

package mcpserver_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/sourcegraph/jsonrpc2"

	"github.com/devicectl/devicectl/agent/hub/hubtest"
	"github.com/devicectl/devicectl/agent/server"
	"github.com/devicectl/devicectl/internal/config"
	devhw "github.com/devicectl/devicectl/internal/hardware"
	"github.com/devicectl/devicectl/internal/simdevice"
	"github.com/devicectl/devicectl/internal/testing/leakcheck"
	"github.com/devicectl/devicectl/internal/testing/mcpclient"
	"github.com/devicectl/devicectl/internal/testing/servetest"
	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
)

// wait bounds what a test waits for on loopback: it takes milliseconds, so running out means
// something is broken.
const wait = 10 * time.Second

// startServe runs the agent server as `devicectl serve` builds it, on a loopback port, until the
// test ends; edit changes its config. It returns the server and its address. Called first, it
// also checks that nothing the test started outlives it.
func startServe(t *testing.T, edit func(c *config.Config)) (*server.Server, string) {
	t.Helper()
	leakcheck.Check(t)
	c := config.Defaults()
	if edit != nil {
		edit(c)
	}
	return servetest.Start(t, c)
}

// simSpeaker is a device agent on simulated hardware (`devicectl run --hardware sim`) attached
// to the server at addr; volumes receives every level its speaker is set to.
type simSpeaker struct {
	*simdevice.Device
	volumes chan int
	finals  chan string // what the device was given to show and speak as a final
}

func startSim(t *testing.T, addr, mac string) *simSpeaker {
	t.Helper()
	d := &simSpeaker{volumes: make(chan int, 64), finals: make(chan string, 64)}
	c := config.Defaults()
	c.Device.StateDir = t.TempDir()
	dev, err := simdevice.Start(t.Context(), c, "ws://"+addr+"/", mac, "test", &devhw.SimHooks{OnVolume: func(p int) { d.volumes <- p }}, d.render, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() })
	d.Device = dev
	return d
}

// render keeps the device's finals; past the channel's room they are dropped, and a test
// expecting one fails.
func (d *simSpeaker) render(m protocol.AIMessage) {
	if m.Type == "final" {
		select {
		case d.finals <- m.Content:
		default:
		}
	}
}

// waitFinal waits for the device to be given want as a final, failing on any final in refuse.
func (d *simSpeaker) waitFinal(t *testing.T, want string, refuse ...string) {
	t.Helper()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case got := <-d.finals:
			if got == want {
				return
			}
			if slices.Contains(refuse, got) {
				t.Fatalf("the device was given %q, which was not for it", got)
			}
		case <-timer.C:
			t.Fatalf("the device was not given %q within %s", want, wait)
		}
	}
}

// waitVolume waits for the speaker to be set to want.
func (d *simSpeaker) waitVolume(t *testing.T, want int) {
	t.Helper()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case got := <-d.volumes:
			if got == want {
				return
			}
		case <-timer.C:
			t.Fatalf("the sim speaker was not set to %d within %s", want, wait)
		}
	}
}

// attachBar connects a device of agent/hub/hubtest to serve at addr, answering calls with handle
// (nil: hubtest.Echo), and registers decls as barMAC; the device is closed when the test ends.
func attachBar(t *testing.T, addr, decls string, handle hubtest.Handler) *hubtest.Device {
	t.Helper()
	dev := hubtest.Connect(t, "ws://"+addr+"/", &hubtest.Options{Handle: handle})
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if _, err := dev.Register(ctx, barMAC, decls); err != nil {
		t.Fatal(err)
	}
	return dev
}

// holding answers a call with {} only once hold is closed or the device's line is gone; started,
// when not nil, is sent a value as each call comes in (dropped when it is full).
func holding(started chan<- struct{}, hold <-chan struct{}) hubtest.Handler {
	return func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, *jsonrpc2.Error) {
		select {
		case started <- struct{}{}:
		default:
		}
		select {
		case <-hold:
		case <-ctx.Done():
		}
		return json.RawMessage(`{}`), nil
	}
}

// connect opens an MCP session to serve's /mcp at addr (internal/testing/mcpclient); changed
// receives a value for every notifications/tools/list_changed.
func connect(t *testing.T, addr, token string) (cs *mcp.ClientSession, changed chan struct{}) {
	t.Helper()
	return mcpclient.Connect(t, "http://"+addr+"/mcp", token)
}

// tryConnect is connect that returns the error instead of failing the test.
func tryConnect(t *testing.T, addr, token string) (*mcp.ClientSession, chan struct{}, error) {
	t.Helper()
	return mcpclient.Dial(t, "http://"+addr+"/mcp", token)
}

// call calls a tool, failing the test on a protocol error.
func call(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return res
}

// text is a result's text content.
func text(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// waitChanged waits for a notifications/tools/list_changed.
func waitChanged(t *testing.T, changed <-chan struct{}) {
	t.Helper()
	select {
	case <-changed:
	case <-time.After(wait):
		t.Fatalf("no notifications/tools/list_changed within %s", wait)
	}
}

// drain empties changed of the notifications already received.
func drain(changed <-chan struct{}) {
	for {
		select {
		case <-changed:
		default:
			return
		}
	}
}

// compactJSON marshals v compactly, for comparing schemas.
func compactJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(m) // keys sorted
	return string(b)
}

type toolDecl = tools.Declaration
