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

	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/testing/mcpclient"
)

// Each device is also DEVICE__announce {text}: the device (and only it) shows and speaks the
// text, through the local announce tool. It is listed and removed with the device's own tools.
func TestDeviceAnnounce(t *testing.T) {
	_, addr := startServe(t, func(c *config.Config) {
		c.Agent.DeviceAliases = map[string]string{deskMAC: "desk"}
	})
	cs, changed := connect(t, addr, "")
	desk := startSim(t, addr, deskMAC)
	bar := startSim(t, addr, barMAC)
	barAnnounce := barMAC + "__announce"
	mcpclient.WaitListed(t, cs, changed, "desk__announce", barAnnounce, "desk__amplify_volume")

	var listed *mcp.Tool
	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if tool.Name == "desk__announce" {
			listed = tool
		}
	}
	schema := compactJSON(t, listed.InputSchema)
	if listed.Title != "announce on desk" || !strings.Contains(schema, `"required":["text"]`) || strings.Contains(schema, `"mac"`) {
		t.Errorf("desk__announce is listed as %q with the schema %s; want the title \"announce on desk\" and only a required text", listed.Title, schema)
	}

	res := call(t, cs, "desk__announce", map[string]any{"text": "Dinner is ready"})
	if res.IsError || text(res) != `["`+deskMAC+`"]` {
		t.Fatalf("desk__announce: isError %v %q, want the desk's MAC", res.IsError, text(res))
	}
	desk.waitFinal(t, "Dinner is ready")
	res = call(t, cs, barAnnounce, map[string]any{"text": "Bar is open"})
	if res.IsError {
		t.Fatalf("%s: %q", barAnnounce, text(res))
	}
	// Messages on a line keep their order: had the bar been given the desk's, it came first.
	bar.waitFinal(t, "Bar is open", "Dinner is ready")

	for _, c := range []struct {
		args any
		want string
	}{
		{map[string]any{}, "desk__announce: Invalid params (-32602): "},
		{map[string]any{"text": 7}, "desk__announce: Invalid params (-32602): "},
		{map[string]any{"text": "hi", "mac": barMAC}, "desk__announce: Invalid params (-32602): "}, // no way to another device
		{map[string]any{"text": "  "}, "desk__announce: "},
		{map[string]any{"text": strings.Repeat("长", 600)}, "desk__announce: "},
	} {
		if res := call(t, cs, "desk__announce", c.args); !res.IsError || !strings.HasPrefix(text(res), c.want) {
			b, _ := json.Marshal(c.args)
			t.Errorf("desk__announce %s: isError %v %q, want a tool error starting %q", b, res.IsError, text(res), c.want)
		}
	}

	drain(changed)
	if err := bar.Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(wait)
	for names := mcpclient.ToolNames(t, cs); slices.Contains(names, barAnnounce); names = mcpclient.ToolNames(t, cs) {
		if time.Now().After(deadline) {
			t.Fatalf("after the device disconnected, tools/list still has %s: %v", barAnnounce, names)
		}
		waitChanged(t, changed)
	}
	if names := mcpclient.ToolNames(t, cs); !slices.Contains(names, "desk__announce") {
		t.Errorf("the desk's announce went with the bar: %v", names)
	}
	res = call(t, cs, barAnnounce, map[string]any{"text": "anyone?"})
	if !res.IsError || !strings.HasPrefix(text(res), barAnnounce+": the device "+barMAC+" disconnected") {
		t.Errorf("announcing on the gone device: isError %v %q, want a tool error saying it disconnected", res.IsError, text(res))
	}
}

// A device that declares an announce tool of its own keeps it as DEVICE__announce: the server's
// does not shadow what the device says its tool does.
func TestDeviceOwnAnnounce(t *testing.T) {
	_, addr := startServe(t, nil)
	cs, changed := connect(t, addr, "")
	called := make(chan string, 1)
	attachBar(t, addr, `[{"name":"announce","description":"Chime, then say it.","main_type":"remote","sub_type":"query",
		"parameters":{"type":"object","properties":{"text":{"type":"string"},"chime":{"type":"boolean"}},"required":["text"]}}]`,
		func(_ context.Context, tool string, input json.RawMessage) (json.RawMessage, *jsonrpc2.Error) {
			called <- tool + " " + string(input)
			return json.RawMessage(`{"status":"success"}`), nil
		})
	mcpclient.WaitListed(t, cs, changed, barMAC+"__announce")
	if res := call(t, cs, barMAC+"__announce", map[string]any{"text": "hi", "chime": true}); res.IsError {
		t.Fatalf("the device's own announce: %q", text(res))
	}
	if got := <-called; got != `announce {"chime":true,"text":"hi"}` {
		t.Errorf("the device was called with %s", got)
	}
}
