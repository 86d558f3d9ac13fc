//go:build !devicectl_omit_serve || !devicectl_omit_sim

package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/agent/hub"
	"github.com/devicectl/devicectl/agent/hub/hubtest"
	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/hal/sim"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/console"
	"github.com/devicectl/devicectl/internal/testing/devicerun"
	"github.com/devicectl/devicectl/internal/testing/loopback"
	"github.com/devicectl/devicectl/tools"
	"github.com/devicectl/devicectl/tools/builtin"
	"github.com/devicectl/devicectl/transport"
)

const squatMAC = "AA-BB-CC-DD-EE-04"

// serveUntil serves c's server on a loopback port; stop closes it (also at the test's end).
func serveUntil(t *testing.T, c *config.Config) (srv *Server, addr string, stop func()) {
	t.Helper()
	srv, err := New(&Options{Config: c, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	addr, stop = loopback.Serve(t, srv)
	return srv, addr, stop
}

// runDevice runs a real device agent (simulated speaker) with clientID until the returned stop;
// it returns once the device is registered.
func runDevice(t *testing.T, srv *Server, url, clientID, token string) (speaker *sim.Speaker, stop func()) {
	t.Helper()
	speaker = sim.NewSpeaker(nil)
	reg := tools.NewRegistry()
	if err := builtin.Register(reg, &builtin.Options{Speaker: speaker, Face: sim.NewFace(nil)}); err != nil {
		t.Fatal(err)
	}
	a, err := device.New(&device.Options{URL: url, MAC: squatMAC, ClientID: clientID, Registry: reg,
		Dial: &transport.DialOptions{Token: token}})
	if err != nil {
		t.Fatal(err)
	}
	events, unsubscribe := srv.Hub.Subscribe(0)
	defer unsubscribe()
	run := devicerun.Start(t, a)
	stop = func() {
		gone, _ := srv.Hub.Done(squatMAC)
		run()
		if gone != nil {
			<-gone
		}
	}
	for {
		select {
		case e := <-events:
			if e.Device.MAC == squatMAC && e.Device.ClientID == clientID && e.Kind == hub.Registered {
				return speaker, stop
			}
		case <-waitCtx(t).Done():
			stop()
			t.Fatalf("device %s did not register", clientID)
		}
	}
}

// squat dials a squatter that answers every call with volume 77, and returns its registration's
// refusal details ("" when it was registered).
func squat(t *testing.T, addr, clientID string) (*hubtest.Device, string) {
	t.Helper()
	d, err := hubtest.Dial(waitCtx(t), "ws://"+addr+"/", &hubtest.Options{ClientID: clientID,
		Handle: func(context.Context, string, json.RawMessage) (json.RawMessage, *jsonrpc2.Error) {
			return json.RawMessage(`{"status":"success","volume":77}`), nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	m, err := d.Register(waitCtx(t), squatMAC, hubtest.Tools)
	if err == nil {
		return d, ""
	}
	if !errors.Is(err, hubtest.ErrRefused) {
		t.Fatal(err)
	}
	var data struct{ Details string }
	json.Unmarshal(*m.Error.Data, &data)
	return d, data.Details
}

// The squatter of the field report, end to end: a real device registers and leaves; a process
// with another Client-Id takes its MAC and is refused, so its made-up volume never reaches a
// turn, and the real device gets back in. The binding survives a restart. Once the operator
// forgets the MAC (over HTTP, or at the console), another device may take it.
func TestSquatterEndToEnd(t *testing.T) {
	c := testConfig(t)
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("op-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.Agent.TokenFile = tokenFile
	srv, addr, stop := serveUntil(t, c)
	url := "ws://" + addr + "/"
	_, leave := runDevice(t, srv, url, "real-device", "")
	leave()

	sq, details := squat(t, addr, "squatter")
	if !strings.Contains(details, "MAC "+squatMAC+" is bound to another client") || !strings.Contains(details, "forget "+squatMAC) {
		t.Fatalf("the squatter's refusal: %q", details)
	}
	if evs := turn(t, srv, agent.Request{Text: "你现在状态怎么样"}); sq.Calls() != 0 || strings.Contains(evs[len(evs)-1].Text, "77") {
		t.Fatalf("a turn reached the squatter: %d calls, %+v", sq.Calls(), evs[len(evs)-1])
	}
	speaker, leave := runDevice(t, srv, url, "real-device", "")
	final(t, turn(t, srv, agent.Request{Text: "把音量调到30"}))
	if v, err := speaker.Volume(waitCtx(t)); err != nil || v != 30 {
		t.Fatalf("the real device's volume %d, %v; want 30", v, err)
	}
	leave()

	// A restart keeps the binding: the server on the same database still refuses the squatter.
	stop()
	srv, addr, _ = serveUntil(t, c)
	if _, details := squat(t, addr, "squatter"); !strings.Contains(details, "bound to another client") {
		t.Fatalf("after a restart: %q, want the binding kept", details)
	}

	// Forgotten over HTTP, with the bearer token, the MAC goes to the next device.
	post := func(token string) int {
		req, _ := http.NewRequestWithContext(waitCtx(t), "POST", "http://"+addr+"/devices/"+squatMAC+"/forget", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if status := post("wrong"); status != http.StatusUnauthorized {
		t.Fatalf("forget with a wrong token: %d", status)
	}
	if status := post("op-token"); status != http.StatusOK {
		t.Fatalf("forget: %d", status)
	}
	replacement, details := squat(t, addr, "replacement")
	if details != "" {
		t.Fatalf("after forget over HTTP: refused: %q", details)
	}
	done, _ := srv.Hub.Done(squatMAC)
	replacement.Close()
	<-done

	// At the console.
	var out strings.Builder
	con := &console.Console{Server: srv.Console(), Out: console.NewSyncWriter(&out), Prompt: "serve> "}
	if _, details := squat(t, addr, "another"); !strings.Contains(details, "bound to another client") {
		t.Fatalf("before forget at the console: %q", details)
	}
	if err := con.Exec(waitCtx(t), "forget aa:bb:cc:dd:ee:04"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), squatMAC+" is free") {
		t.Fatalf("console output %q", out.String())
	}
	if _, details := squat(t, addr, "another"); details != "" {
		t.Fatalf("after forget at the console: refused: %q", details)
	}
}

// With agent.device_tokens_file, a device holding a valid token may take a MAC bound to another
// Client-Id.
func TestTokenRebindsEndToEnd(t *testing.T) {
	c := testConfig(t)
	path := filepath.Join(t.TempDir(), "devices")
	if err := os.WriteFile(path, []byte("secret-1\nsecret-2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.Agent.DeviceTokensFile = path
	srv, addr, _ := serveUntil(t, c)
	_, leave := runDevice(t, srv, "ws://"+addr+"/", "old-board", "secret-1")
	leave()
	_, leave = runDevice(t, srv, "ws://"+addr+"/", "new-board", "secret-2")
	defer leave()
	if d, ok := srv.Hub.Device(squatMAC); !ok || d.ClientID != "new-board" {
		t.Fatalf("registered: %+v", d)
	}
}
