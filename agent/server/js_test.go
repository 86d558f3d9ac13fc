//go:build !devicectl_omit_serve || !devicectl_omit_sim

package server

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/sim"
	"github.com/devicectl/devicectl/internal/testing/a2ajs"
	"github.com/devicectl/devicectl/internal/testing/devicerun"
	"github.com/devicectl/devicectl/tools"
	"github.com/devicectl/devicectl/tools/builtin"
)

// slowSpeaker is a simulated speaker that holds a SetVolume to slowLevel until the call is
// cancelled: a turn that runs until a client cancels it.
type slowSpeaker struct{ *sim.Speaker }

const slowLevel = 55

func (s slowSpeaker) SetVolume(ctx context.Context, percent int) error {
	if percent == slowLevel {
		<-ctx.Done()
		return ctx.Err()
	}
	return s.Speaker.SetVolume(ctx, percent)
}

var _ hal.Speaker = slowSpeaker{}

// The npm @a2a-js/sdk clients (1.3.0, A2A 1.0; 0.3.14, A2A 0.3) against the agent server as
// serve builds it, with a device attached and the token asked for: send, stream, get and cancel
// each (agent/a2a/testdata/js/check.mjs, through internal/testing/a2ajs). The turn they cancel
// is 把音量调到55, held by the device's speaker. Opt in with DEVICECTL_A2A_JS=1 after scripts/a2a-js.sh (CI does).
func TestJSClientsAgainstServer(t *testing.T) {
	js := a2ajs.Need(t)
	c := testConfig(t)
	c.Agent.WaitForControl = true // so the held SetVolume holds the turn
	const token = "js-secret"
	c.Agent.TokenFile = filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(c.Agent.TokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, addr := startServer(t, c)

	spk := slowSpeaker{sim.NewSpeaker(nil)}
	reg := tools.NewRegistry()
	if err := builtin.Register(reg, &builtin.Options{Speaker: spk, Face: sim.NewFace(nil)}); err != nil {
		t.Fatal(err)
	}
	registered := make(chan struct{})
	a, err := device.New(&device.Options{URL: "ws://" + addr + "/", MAC: "AA-BB-CC-DD-EE-01", Registry: reg,
		DrainTimeout: 100 * time.Millisecond, // the held call need not drain at the end
		OnState: func(s device.State) {
			if s == device.Registered {
				select {
				case <-registered:
				default:
					close(registered)
				}
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer devicerun.Start(t, a)()
	select {
	case <-registered:
	case <-waitCtx(t).Done():
		t.Fatal("the device did not register")
	}

	js.Run(t, a2ajs.Checks{URL: "http://" + addr, Token: token, MAC: "aa:bb:cc:dd:ee:01", SlowText: "把音量调到55", WantReply: "好的，音量调到30了。"})
	if v, err := spk.Volume(waitCtx(t)); err != nil || v != 30 {
		t.Errorf("the device's volume is %d, %v; want 30", v, err)
	}
}
