//go:build !devicectl_omit_serve || !devicectl_omit_sim

package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/hal/sim"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/testing/devicerun"
	"github.com/devicectl/devicectl/internal/testing/loopback"
	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
	"github.com/devicectl/devicectl/tools/builtin"
	"github.com/devicectl/devicectl/transport"
)

// waitCtx bounds waits for things that take milliseconds when they work.
func waitCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// testConfig is the defaults with the database in a test directory.
func testConfig(t testing.TB) *config.Config {
	c := config.Defaults()
	c.Agent.StateDir = t.TempDir()
	return c
}

// startServer builds c's server and serves it on a loopback port until the test ends. It returns
// the server and its address.
func startServer(t testing.TB, c *config.Config) (*Server, string) {
	t.Helper()
	srv, err := New(&Options{Config: c, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := loopback.Serve(t, srv)
	return srv, addr
}

// simDevice is a device agent with simulated hardware and the built-in tools, connected to url
// until the test ends.
type simDevice struct {
	speaker *sim.Speaker
	face    *sim.Face
	replies chan string // the finals the device rendered
	state   chan device.State
}

func startDevice(t testing.TB, url, mac, token string) *simDevice {
	t.Helper()
	d := &simDevice{speaker: sim.NewSpeaker(nil), face: sim.NewFace(nil), replies: make(chan string, 16), state: make(chan device.State, 64)}
	reg := tools.NewRegistry()
	if err := builtin.Register(reg, &builtin.Options{Speaker: d.speaker, Face: d.face}); err != nil {
		t.Fatal(err)
	}
	a, err := device.New(&device.Options{
		URL: url, MAC: mac, Registry: reg,
		Dial: &transport.DialOptions{Token: token},
		Render: func(m protocol.AIMessage) {
			if m.Type == protocol.MessageFinal {
				select {
				case d.replies <- m.Content:
				default: // a test that does not read them (a benchmark)
				}
			}
		},
		OnState: func(s device.State) {
			select {
			case d.state <- s:
			default:
			}
		},
		Backoff: device.Backoff{Min: 50 * time.Millisecond, Max: 100 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	devicerun.Start(t, a)
	return d
}

// waitRegistered waits until the device's state is registered.
func (d *simDevice) waitRegistered(t testing.TB) {
	t.Helper()
	ctx := waitCtx(t)
	for {
		select {
		case s := <-d.state:
			if s == device.Registered {
				return
			}
		case <-ctx.Done():
			t.Fatal("the device did not register within 10s")
		}
	}
}

// turn runs a turn to its end and returns its events.
func turn(t testing.TB, srv *Server, r agent.Request) []agent.Event {
	t.Helper()
	var evs []agent.Event
	for ev := range srv.Agent.Turn(waitCtx(t), r) {
		evs = append(evs, ev)
	}
	if len(evs) == 0 {
		t.Fatalf("turn %q: no events", r.Text)
	}
	return evs
}

func final(t testing.TB, evs []agent.Event) string {
	t.Helper()
	last := evs[len(evs)-1]
	if last.Kind != agent.EventFinal {
		t.Fatalf("the turn ended with %v (%v), want a final", last.Kind, last.Err)
	}
	return last.Text
}

// A device dials any path of the server; a turn of the rule planner sets its volume and the
// device renders the reply; plain HTTP is not the hub's.
func TestServeTurn(t *testing.T) {
	srv, addr := startServer(t, testConfig(t))
	d := startDevice(t, "ws://"+addr+"/some/old/path", "AA-BB-CC-DD-EE-01", "")
	d.waitRegistered(t)

	reply := final(t, turn(t, srv, agent.Request{Text: "把音量调到30"}))
	if v, err := d.speaker.Volume(waitCtx(t)); err != nil || v != 30 {
		t.Errorf("volume %d, %v after 把音量调到30; want 30", v, err)
	}
	if !strings.Contains(reply, "30") {
		t.Errorf("reply %q does not say 30", reply)
	}
	select {
	case got := <-d.replies:
		if got != reply {
			t.Errorf("the device rendered %q, the turn's final is %q", got, reply)
		}
	case <-waitCtx(t).Done():
		t.Fatal("the device rendered no final")
	}

	resp, err := http.Get("http://" + addr + "/no-such-route")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /no-such-route: %s, want 404", resp.Status)
	}
}

// The server's own tools are there with no device at all.
func TestServeLocalToolsOnly(t *testing.T) {
	srv, _ := startServer(t, testConfig(t))
	evs := turn(t, srv, agent.Request{Text: "3*(4+5)"})
	if reply := final(t, evs); !strings.Contains(reply, "27") {
		t.Errorf("3*(4+5): reply %q, want 27 in it", reply)
	}
}

// With agent.device_tokens_file, a device registers only with one of its tokens.
func TestServeDeviceTokens(t *testing.T) {
	c := testConfig(t)
	path := filepath.Join(t.TempDir(), "devices")
	if err := os.WriteFile(path, []byte("# devices\nsecret-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.Agent.DeviceTokensFile = path
	srv, addr := startServer(t, c)
	good := startDevice(t, "ws://"+addr+"/", "AA-BB-CC-DD-EE-01", "secret-1")
	good.waitRegistered(t)
	_, err := transport.Dial(waitCtx(t), "ws://"+addr+"/", &transport.DialOptions{Token: "wrong"})
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("dialling with a wrong token: %v, want a 401 refusal", err)
	}
	if n := len(srv.Hub.Devices()); n != 1 {
		t.Errorf("%d devices registered, want the one with the token", n)
	}
}

// What New refuses, it refuses naming the key.
func TestNewErrors(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cases := []struct {
		name string
		edit func(c *config.Config)
		key  string
	}{
		{"open beyond loopback", func(c *config.Config) { c.Agent.Listen = "0.0.0.0:8765" }, "agent.listen"},
		{"missing device tokens", func(c *config.Config) { c.Agent.DeviceTokensFile = "/nonexistent/tokens" }, "agent.device_tokens_file"},
		{"llm without model", func(c *config.Config) {
			c.Agent.Planner = config.PlannerLLM
			c.LLM.BaseURL = "http://127.0.0.1:1/v1"
		}, "llm.model"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := testConfig(t)
			tc.edit(c)
			srv, err := New(&Options{Config: c, Logger: log})
			var ce *config.Error
			if !errors.As(err, &ce) || ce.Key != tc.key {
				if srv != nil {
					srv.Close()
				}
				t.Errorf("New: %v, want a *config.Error on %s", err, tc.key)
			}
		})
	}
}
