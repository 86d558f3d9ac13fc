package hub_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/devicectl/devicectl/agent/hub"
	"github.com/devicectl/devicectl/agent/hub/hubtest"
	"github.com/devicectl/devicectl/agent/store/storetest"
	"github.com/devicectl/devicectl/internal/testing/leakcheck"
)

const macSquat = "AA-BB-CC-DD-EE-04"

// leave closes d and waits until the hub has seen its registration end.
func leave(t *testing.T, h *hub.Hub, d *hubtest.Device, mac string) {
	t.Helper()
	done, ok := h.Done(mac)
	if !ok {
		t.Fatalf("%s is not registered", mac)
	}
	d.Close()
	<-done
}

// squatter is a device that answers every call with a made-up volume.
func squatter(t *testing.T, url, clientID string) *hubtest.Device {
	return hubtest.Connect(t, url, &hubtest.Options{ClientID: clientID, Handle: func(context.Context, string, json.RawMessage) (json.RawMessage, *jsonrpc2.Error) {
		return json.RawMessage(`{"status":"success","volume":77}`), nil
	}})
}

// boundRefusal checks that d's registration of mac is refused because mac is bound elsewhere,
// with details that say how the operator frees it and do not give the bound Client-Id away.
func boundRefusal(t *testing.T, d *hubtest.Device, mac, ownerID string) {
	t.Helper()
	details := refusal(t, d, params(mac, hubtest.Tools))
	for _, want := range []string{"MAC " + mac + " is bound to another client", "forget " + mac, "POST /devices/" + mac + "/forget", "agent.device_tokens_file"} {
		if !strings.Contains(details, want) {
			t.Errorf("refusal %q does not say %q", details, want)
		}
	}
	if strings.Contains(details, ownerID) {
		t.Errorf("refusal %q gives the bound Client-Id %q away", details, ownerID)
	}
}

// A MAC whose device is offline cannot be taken by another Client-Id: the squatter is refused,
// its made-up answers never reach a caller, and the real device comes back. Once the operator
// forgets the MAC, the next device to register it binds it.
func TestSquatterRefused(t *testing.T) {
	leakcheck.Check(t)
	h, url := start(t, nil)
	real := hubtest.Connect(t, url, &hubtest.Options{ClientID: "real-device"})
	real.MustRegister(t, macSquat)
	leave(t, h, real, macSquat)

	sq := squatter(t, url, "squatter")
	boundRefusal(t, sq, macSquat, "real-device")
	if _, err := h.Call(ctxFor(t), macSquat, "get_status", json.RawMessage(`{}`)); !errors.Is(err, hub.ErrNotRegistered) || sq.Calls() != 0 {
		t.Fatalf("a call after the refusal: %v, squatter calls %d; want no device", err, sq.Calls())
	}
	// Without a Client-Id it is refused just the same.
	boundRefusal(t, hubtest.Connect(t, url, nil), macSquat, "real-device")

	back := hubtest.Connect(t, url, &hubtest.Options{ClientID: "real-device"})
	back.MustRegister(t, macSquat)
	if res, err := h.Call(ctxFor(t), macSquat, "get_status", json.RawMessage(`{}`)); err != nil || strings.Contains(string(res), "77") {
		t.Fatalf("a call to the device back: %s, %v", res, err)
	}
	leave(t, h, back, macSquat)

	if was, err := h.Forget(ctxFor(t), "aa:bb:cc:dd:ee:04"); err != nil || !was {
		t.Fatalf("Forget: %v, %v; want true", was, err)
	}
	if was, err := h.Forget(ctxFor(t), macSquat); err != nil || was {
		t.Fatalf("Forget again: %v, %v; want false", was, err)
	}
	if _, err := h.Forget(ctxFor(t), "not-a-mac"); err == nil {
		t.Fatal("Forget of a bad MAC: no error")
	}
	sq.MustRegister(t, macSquat) // the replacement device
	leave(t, h, sq, macSquat)
	boundRefusal(t, hubtest.Connect(t, url, &hubtest.Options{ClientID: "real-device"}), macSquat, "squatter")
}

// A device without a Client-Id registers a free MAC without binding it.
func TestNoClientIDDoesNotBind(t *testing.T) {
	leakcheck.Check(t)
	h, url := start(t, nil)
	anon := hubtest.Connect(t, url, nil)
	anon.MustRegister(t, macA)
	leave(t, h, anon, macA)
	hubtest.Connect(t, url, &hubtest.Options{ClientID: "first"}).MustRegister(t, macA)
}

// With device tokens, a device holding a valid one may take a MAC bound to another Client-Id:
// the token is the authority. A live device still keeps its MAC.
func TestTokenRebinds(t *testing.T) {
	leakcheck.Check(t)
	h, url := start(t, &hub.Options{Tokens: []string{"t1", "t2"}})
	old := hubtest.Connect(t, url, &hubtest.Options{Token: "t1", ClientID: "old"})
	old.MustRegister(t, macSquat)
	if details := refusal(t, hubtest.Connect(t, url, &hubtest.Options{Token: "t2", ClientID: "new"}), params(macSquat, hubtest.Tools)); !strings.Contains(details, "live connection") {
		t.Fatalf("a token against a live device: %q, want the live device kept", details)
	}
	leave(t, h, old, macSquat)
	fresh := hubtest.Connect(t, url, &hubtest.Options{Token: "t2", ClientID: "new"})
	fresh.MustRegister(t, macSquat)
	if dv, _ := h.Device(macSquat); dv.ClientID != "new" {
		t.Fatalf("registered as %+v", dv)
	}
}

// The bindings kept in the agent's database survive a restart: the hub built on the reopened
// database still refuses the squatter. On PostgreSQL the reopened database is also what a second
// serve process sharing it sees.
func TestBindingsSurviveRestart(t *testing.T) {
	leakcheck.Check(t)
	storetest.Each(t, bindingsSurviveRestart)
}

func bindingsSurviveRestart(t *testing.T, where string) {
	open := func() (*hub.Hub, string) {
		db := storetest.Open(t, where) // closed after the hub: cleanups run last first
		b, err := hub.NewSQLBindings(ctxFor(t), db)
		if err != nil {
			t.Fatal(err)
		}
		return start(t, &hub.Options{Bindings: b})
	}
	h, url := open()
	real := hubtest.Connect(t, url, &hubtest.Options{ClientID: "real-device"})
	real.MustRegister(t, macSquat)
	leave(t, h, real, macSquat)
	h.Close()

	h, url = open()
	boundRefusal(t, squatter(t, url, "squatter"), macSquat, "real-device")
	hubtest.Connect(t, url, &hubtest.Options{ClientID: "real-device"}).MustRegister(t, macSquat)
	if was, err := h.Forget(ctxFor(t), macSquat); err != nil || !was {
		t.Fatalf("Forget: %v, %v", was, err)
	}
	if was, err := h.Forget(ctxFor(t), macSquat); err != nil || was {
		t.Fatalf("Forget again: %v, %v; want false", was, err)
	}
}

// POST /devices/{mac}/forget frees a MAC, with the bearer token when one is set; other methods,
// bad MACs and a browser's cross-origin posts are refused.
func TestForgetRoute(t *testing.T) {
	leakcheck.Check(t)
	h, url := start(t, nil)
	real := hubtest.Connect(t, url, &hubtest.Options{ClientID: "real-device"})
	real.MustRegister(t, macSquat)
	leave(t, h, real, macSquat)

	api := httptest.NewServer(h.ForgetHandler("op-token"))
	defer api.Close()
	do := func(method, path, token string, header map[string]string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctxFor(t), method, api.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, strings.TrimSpace(string(b))
	}
	path := "/devices/" + macSquat + "/forget"
	for _, tc := range []struct {
		name, method, path, token string
		header                    map[string]string
		status                    int
		body                      string
	}{
		{"no token", "POST", path, "", nil, 401, "bearer token"},
		{"wrong token", "POST", path, "op-tokeN", nil, 401, "bearer token"},
		{"GET", "GET", path, "op-token", nil, 405, ""},
		{"bad MAC", "POST", "/devices/nope/forget", "op-token", nil, 400, `\"nope\" is not a MAC address: it is 4 characters long`},
		{"cross-origin", "POST", path, "op-token", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"}, 403, "cross-origin"},
	} {
		if status, body := do(tc.method, tc.path, tc.token, tc.header); status != tc.status || !strings.Contains(body, tc.body) {
			t.Errorf("%s: %d %s, want %d with %q", tc.name, status, body, tc.status, tc.body)
		}
	}
	boundRefusal(t, squatter(t, url, "squatter"), macSquat, "real-device") // nothing was forgotten yet

	if status, body := do("POST", "/devices/aa:bb:cc:dd:ee:04/forget", "op-token", nil); status != 200 || body != `{"forgotten":true,"mac":"AA-BB-CC-DD-EE-04"}` {
		t.Fatalf("forget: %d %s", status, body)
	}
	if status, body := do("POST", path, "op-token", nil); status != 200 || body != `{"forgotten":false,"mac":"AA-BB-CC-DD-EE-04"}` {
		t.Fatalf("forget again: %d %s", status, body)
	}
	hubtest.Connect(t, url, &hubtest.Options{ClientID: "replacement"}).MustRegister(t, macSquat)
}

// brokenBindings is a store that cannot be read, or written.
type brokenBindings struct{ readable bool }

var errBroken = errors.New("disk I/O error")

func (b brokenBindings) Bound(context.Context, string) (string, error) {
	if b.readable {
		return "", nil
	}
	return "", errBroken
}
func (brokenBindings) Bind(context.Context, string, string) error   { return errBroken }
func (brokenBindings) Forget(context.Context, string) (bool, error) { return false, errBroken }

// A store that cannot be read refuses the registration as the server's fault (-32603), without
// its error text; one that cannot be written lets the device in, unbound (the next registration
// binds it). Forget reports the store's error.
func TestBindingsStoreFails(t *testing.T) {
	leakcheck.Check(t)
	h, url := start(t, &hub.Options{Bindings: brokenBindings{}})
	m, err := hubtest.Connect(t, url, &hubtest.Options{ClientID: "c"}).Register(ctxFor(t), macA, hubtest.Tools)
	if !errors.Is(err, hubtest.ErrRefused) || m.Error.Code != -32603 || strings.Contains(err.Error(), "disk") || !strings.Contains(err.Error(), "could not check") {
		t.Fatalf("unreadable bindings: %v", err)
	}
	if _, err := h.Forget(ctxFor(t), macA); !errors.Is(err, errBroken) {
		t.Fatalf("Forget: %v", err)
	}

	_, url = start(t, &hub.Options{Bindings: brokenBindings{readable: true}})
	hubtest.Connect(t, url, &hubtest.Options{ClientID: "c"}).MustRegister(t, macA)
}
