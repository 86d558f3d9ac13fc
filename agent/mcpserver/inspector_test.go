//go:build !devicectl_omit_serve || !devicectl_omit_sim

package mcpserver_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/testing/mcpclient"
	"github.com/devicectl/devicectl/internal/testing/mcpinspector"
)

// TestInspector points the MCP Inspector 0.15.0's CLI (npm @modelcontextprotocol/inspector,
// installed in testdata/inspector by scripts/mcp-inspector.sh) at serve's /mcp with a sim device
// attached: tools/list shows the device's tools, tools/call of its amplify_volume moves the sim
// speaker, robot__announce has the device say a text, and a bad level is an MCP tool error
// carrying the detail. Opt in with DEVICECTL_MCP_INSPECTOR=1 (internal/testing/mcpinspector).
func TestInspector(t *testing.T) {
	cli := mcpinspector.Find(t)

	_, addr := startServe(t, func(c *config.Config) {
		c.Agent.DeviceAliases = map[string]string{deskMAC: "robot"}
	})
	cs, changed := connect(t, addr, "")
	robot := startSim(t, addr, deskMAC)
	mcpclient.WaitListed(t, cs, changed, "robot__amplify_volume") // the server has seen the registration
	endpoint := "http://" + addr + "/mcp"

	// inspect runs the Inspector's CLI with args after the URL and decodes what it prints.
	inspect := func(into any, args ...string) {
		t.Helper()
		out := cli.Run(t, append([]string{endpoint, "--transport", "http"}, args...)...)
		if err := json.Unmarshal(out, into); err != nil {
			t.Fatalf("the Inspector printed no JSON result: %v", err)
		}
	}
	type result struct {
		Content []struct{ Type, Text string }
		IsError bool
	}

	var list struct{ Tools []struct{ Name string } }
	inspect(&list, "--method", "tools/list")
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"robot__amplify_volume", "robot__get_device_status", "robot__announce", "calculate"} {
		if !slices.Contains(names, want) {
			t.Errorf("the Inspector's tools/list lacks %s: %v", want, names)
		}
	}

	var ok result
	inspect(&ok, "--method", "tools/call", "--tool-name", "robot__amplify_volume", "--tool-arg", "level=30")
	if ok.IsError || len(ok.Content) != 1 || ok.Content[0].Text != `{"status":"success"}` {
		t.Errorf("tools/call robot__amplify_volume level=30: %+v, want the success of a control call", ok)
	}
	robot.waitVolume(t, 30)

	var said result
	inspect(&said, "--method", "tools/call", "--tool-name", "robot__announce", "--tool-arg", "text=Dinner is ready")
	if said.IsError || len(said.Content) != 1 || said.Content[0].Text != `["`+deskMAC+`"]` {
		t.Errorf("tools/call robot__announce: %+v, want the device that said it", said)
	}
	robot.waitFinal(t, "Dinner is ready")

	var bad result
	inspect(&bad, "--method", "tools/call", "--tool-name", "robot__amplify_volume", "--tool-arg", "level=150")
	if !bad.IsError || len(bad.Content) != 1 || !strings.Contains(bad.Content[0].Text, "150 is greater than the maximum 100") {
		t.Errorf("tools/call robot__amplify_volume level=150: %+v, want an MCP tool error naming the maximum", bad)
	}
}
