package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/devicectl/devicectl/internal/testing/standin"
	"github.com/devicectl/devicectl/tools/opentool"
	"github.com/devicectl/devicectl/tools/opentoolhttp"
)

// openToolAddr waits for the daemon's nth log line saying where the OpenTool server listens.
func openToolAddr(t *testing.T, d *daemonUnderTest, nth int) string {
	t.Helper()
	m := d.stderr.WaitCount(t, regexp.MustCompile(`serving the device's tools over OpenTool.* listen=(\S+)`), nth)
	return m[nth-1][1]
}

// The device's tools, served to an OpenTool client: the document lists them, a call runs on the
// hardware with the same checks as the agent server's, and a key is required when keys are set.
func TestOpenToolServer(t *testing.T) {
	srv := standin.Start(t, nil)
	keys := standin.WriteFile(t, "keys", "# clients of this device\nk-one\n\nk-two\n")
	config := standin.BaseConfig(t, srv.URL()) + fmt.Sprintf("opentool:\n  listen: 127.0.0.1:0\n  api_keys_file: %s\n", keys)
	d := startDaemon(t, config, nil)
	dev := standin.NextRegistration(t, srv)
	addr := openToolAddr(t, d, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	c, err := opentoolhttp.NewClient("http://"+addr, &opentoolhttp.ClientOptions{APIKey: "k-two"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	if v, err := c.Version(ctx); err != nil || !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(v) {
		t.Errorf("version = %q, %v; want x.y.z", v, err)
	}
	raw, err := c.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := opentool.Parse(raw)
	if err != nil {
		t.Fatalf("the device's document does not parse: %v\n%s", err, raw)
	}
	var names []string
	for _, f := range doc.Functions {
		names = append(names, f.Name)
	}
	if want := standin.ToolNames(dev); !slices.Equal(names, want) {
		t.Errorf("document functions = %v, want the registered tools %v", names, want)
	}
	vol := doc.Function("amplify_volume")
	if vol == nil || len(vol.Parameters) != 1 || vol.Parameters[0].Name != "level" || !vol.Parameters[0].Required {
		t.Errorf("amplify_volume in the document = %+v, want one required parameter level", vol)
	}

	res, err := c.Call(ctx, "amplify_volume", json.RawMessage(`{"level":30}`))
	if err != nil || !strings.Contains(string(res), `"success"`) {
		t.Errorf("amplify_volume 30 = %s, %v; want success", res, err)
	}
	status := standin.Execute(t, dev, "get_device_status", `{}`)
	if !strings.Contains(string(*status.Result), `"volume":30`) {
		t.Errorf("after the OpenTool call the device reports %s, want volume 30", *status.Result)
	}

	_, err = c.Call(ctx, "amplify_volume", json.RawMessage(`{"level":150}`))
	var ce *opentoolhttp.ClientError
	if !errors.As(err, &ce) || !errors.Is(err, opentoolhttp.ErrCall) || ce.Code != -32602 {
		t.Errorf("amplify_volume 150 = %v, want the device's -32602", err)
	} else if !strings.Contains(string(ce.Data), "tool_input.level: 150 is greater than the maximum 100") {
		t.Errorf("amplify_volume 150 data = %s, want the validation details", ce.Data)
	}

	for _, key := range []string{"", "k-three"} {
		bad, err := opentoolhttp.NewClient("http://"+addr, &opentoolhttp.ClientOptions{APIKey: key})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := bad.Call(ctx, "amplify_volume", json.RawMessage(`{"level":1}`)); !errors.Is(err, opentoolhttp.ErrUnauthorized) {
			t.Errorf("call with key %q = %v, want unauthorized", key, err)
		}
		bad.CloseIdleConnections()
	}
	for _, secret := range []string{"k-one", "k-two"} {
		if strings.Contains(d.stderr.String(), secret) {
			t.Errorf("the log holds the API key %q", secret)
		}
	}

	// A key file renewed in place is taken at the next reload, on the same address.
	if err := os.WriteFile(keys, []byte("k-new\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d.reload(t, config, "configuration reloaded")
	if !strings.Contains(d.stderr.String(), `changed="key files"`) {
		t.Errorf("the reload did not see the key file change:\n%s", d.stderr.String())
	}
	if _, err := c.Call(ctx, "get_device_status", json.RawMessage(`{}`)); !errors.Is(err, opentoolhttp.ErrUnauthorized) {
		t.Errorf("old key after the reload: %v, want unauthorized", err)
	}
	fresh, _ := opentoolhttp.NewClient("http://"+addr, &opentoolhttp.ClientOptions{APIKey: "k-new"})
	defer fresh.CloseIdleConnections()
	if _, err := fresh.Call(ctx, "get_device_status", json.RawMessage(`{}`)); err != nil {
		t.Errorf("new key after the reload: %v", err)
	}
}

// remoteTools is an OpenTool server on the LAN, in the test: a lamp with two functions.
type remoteTools struct {
	addr  string
	calls atomic.Int32
	srv   *http.Server
	doc   atomic.Pointer[string]
}

const lampDoc = `{
  "opentool": "1.0.0",
  "info": {"title": "lamp", "version": "1.0.0"},
  "functions": [
    {"name": "turn_on", "description": "Turn the lamp on.", "parameters": [
      {"name": "brightness", "description": "percent", "schema": {"type": "integer"}, "required": true},
      {"name": "colour", "schema": {"type": "string", "enum": ["warm", "cold"]}, "required": false}]},
    {"name": "fail", "description": "Always fails.", "parameters": []}
  ]
}`

// serveRemote starts (or restarts, on the same address) the lamp's server.
func serveRemote(t *testing.T, r *remoteTools, addr string) {
	t.Helper()
	if r.doc.Load() == nil {
		doc := lampDoc
		r.doc.Store(&doc)
	}
	h, err := opentoolhttp.NewHandler(&opentoolhttp.HandlerOptions{
		Load: func(context.Context) (json.RawMessage, error) { return json.RawMessage(*r.doc.Load()), nil },
		Call: func(_ context.Context, name string, params json.RawMessage) (any, error) {
			r.calls.Add(1)
			if name == "fail" {
				return nil, &opentoolhttp.RPCError{Code: -32000, Message: "the lamp is unplugged", Data: map[string]string{"details": "no power on socket 2"}}
			}
			return map[string]any{"lamp": "on", "params": params}, nil
		},
		APIKeys: []string{"lamp-key", "lamp-key-2"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var ln net.Listener
	for i := 0; ; i++ {
		if ln, err = net.Listen("tcp", addr); err == nil || i == 50 {
			break
		}
		time.Sleep(20 * time.Millisecond) // the old socket may linger a moment
	}
	if err != nil {
		t.Fatal(err)
	}
	r.addr = ln.Addr().String()
	r.srv = &http.Server{Handler: h}
	go r.srv.Serve(ln)
	t.Cleanup(func() { r.srv.Close() })
}

// An OpenTool server's functions become device tools: registered when it comes up (here after
// the device), forwarded with its key, failing as -32000, withdrawn when it is gone for good and
// registered again when it is back.
func TestOpenToolToolSet(t *testing.T) {
	srv := standin.Start(t, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // down at start-up
	key := standin.WriteFile(t, "lamp.key", "lamp-key\n")
	config := standin.BaseConfig(t, srv.URL()) + fmt.Sprintf(`toolsets:
  opentool:
    - url: http://%s
      api_key_file: %s
      prefix: lamp_
      sub_types: {turn_on: control}
      refresh: 100ms
      drop_after: 1s
`, addr, key)
	d := startDaemon(t, config, nil)
	first := standin.NextRegistration(t, srv)
	if slices.Contains(standin.ToolNames(first), "lamp_turn_on") {
		t.Fatalf("tools of a server that is down were registered: %v", standin.ToolNames(first))
	}

	remote := &remoteTools{}
	serveRemote(t, remote, addr)
	dev := waitTools(t, srv, "the lamp's tools", hasTools("lamp_turn_on"))
	for _, tl := range dev.Tools {
		if tl.Name == "lamp_turn_on" {
			params, _ := json.Marshal(tl.Parameters)
			if tl.SubType != "control" || !strings.Contains(string(params), `"required":["brightness"]`) {
				t.Errorf("lamp_turn_on declared as %s %s, want control with brightness required", tl.SubType, params)
			}
		}
	}

	resp := standin.Execute(t, dev, "lamp_turn_on", `{"brightness":40,"colour":"warm"}`)
	if resp.Error != nil || !strings.Contains(string(*resp.Result), `"params":{"brightness":40,"colour":"warm"}`) {
		t.Errorf("forwarded call = %s, want the lamp's answer with the params", resultOrError(resp))
	}
	resp = standin.Execute(t, dev, "lamp_turn_on", `{"brightness":"max"}`)
	if resp.Error == nil || resp.Error.Code != -32602 {
		t.Errorf("invalid input = %s, want -32602 from the device's own validation", resultOrError(resp))
	}
	resp = standin.Execute(t, dev, "lamp_fail", `{}`)
	if resp.Error == nil || resp.Error.Code != -32000 || !strings.Contains(resp.Error.Message, "the lamp is unplugged") ||
		!strings.Contains(resp.Error.Message, ": no power on socket 2") {
		t.Errorf("failing function = %s, want -32000 with the lamp's message and details", resultOrError(resp))
	}
	if n := remote.calls.Load(); n != 2 {
		t.Errorf("the lamp got %d calls, want 2 (the invalid one never leaves the device)", n)
	}

	// Down: calls fail clearly; after drop_after the tools are withdrawn.
	remote.srv.Close()
	resp = standin.Execute(t, dev, "lamp_turn_on", `{"brightness":1}`)
	if resp.Error == nil || resp.Error.Code != -32000 || !strings.Contains(resp.Error.Message, "not reachable") {
		t.Errorf("call while the lamp is down = %s, want -32000 not reachable", resultOrError(resp))
	}
	waitTools(t, srv, "the lamp's tools withdrawn", func(n []string) bool { return !slices.Contains(n, "lamp_turn_on") })

	// Back, with a function less: registered again as it now is.
	doc := strings.Replace(lampDoc, `,
    {"name": "fail", "description": "Always fails.", "parameters": []}`, "", 1)
	remote.doc.Store(&doc)
	serveRemote(t, remote, addr)
	dev = waitTools(t, srv, "the lamp back", hasTools("lamp_turn_on"))
	if slices.Contains(standin.ToolNames(dev), "lamp_fail") {
		t.Errorf("lamp_fail is still declared after the lamp dropped it: %v", standin.ToolNames(dev))
	}
	if strings.Contains(d.stderr.String(), "lamp-key") {
		t.Error("the log holds the lamp's API key")
	}
}

func resultOrError(r *jsonrpc2.Response) string {
	if r.Error != nil {
		return r.Error.Error()
	}
	if r.Result == nil {
		return "no result"
	}
	return string(*r.Result)
}

// A key file renewed in place restarts the tool set, but its tools stay declared meanwhile: the
// reload neither withdraws them nor registers again.
func TestToolSetKeyRenewedKeepsTools(t *testing.T) {
	srv := standin.Start(t, nil)
	remote := &remoteTools{}
	serveRemote(t, remote, "127.0.0.1:0")
	key := standin.WriteFile(t, "lamp.key", "lamp-key\n")
	config := standin.BaseConfig(t, srv.URL()) + fmt.Sprintf("toolsets:\n  opentool:\n    - url: http://%s\n      api_key_file: %s\n      prefix: lamp_\n", remote.addr, key)
	d := startDaemon(t, config, nil)
	dev := waitTools(t, srv, "the lamp's tools", hasTools("lamp_turn_on"))

	if err := os.WriteFile(key, []byte("lamp-key-2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d.reload(t, config, "configuration reloaded")
	if !regexp.MustCompile(`configuration reloaded".*changed="key files" tools="[^"]*lamp_turn_on`).MatchString(d.stderr.String()) {
		t.Errorf("the reload did not keep the lamp's tools:\n%s", d.stderr.String())
	}
	if resp := standin.Execute(t, dev, "lamp_turn_on", `{"brightness":3}`); resp.Error != nil {
		t.Errorf("call after the key was renewed = %s", resultOrError(resp))
	}
	select {
	case e := <-srv.Events():
		t.Errorf("the reload made the device %s again with %v", e.Kind, standin.ToolNames(e.Device))
	case <-time.After(300 * time.Millisecond): // bounds the wait for an event that must not come
	}
}
