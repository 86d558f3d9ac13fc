//go:build !devicectl_omit_serve || !devicectl_omit_sim

package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/devicectl/devicectl/agent/mcpserver"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/testing/mcpclient"
)

// functionName is the pattern OpenAI's and Anthropic's APIs hold a tool's name to; a host that
// hands MCP tools to those models passes the names through.
var functionName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// Every listed name fits the hosts' pattern, a device's tools included; a tool whose name would
// be over 64 bytes is listed under a shortened name that is the same on every listing, distinct
// from its sibling's with the same start, and that calls the tool it names.
func TestToolNamesFitHosts(t *testing.T) {
	long := strings.Repeat("very_long_tool_name_", 3) // 60 bytes: with an alias, over 64
	longA, longB := long+"a", long+"b"
	_, addr := startServe(t, func(c *config.Config) {
		c.Agent.DeviceAliases = map[string]string{barMAC: "kitchen-speaker"}
	})
	cs, changed := connect(t, addr, "")
	query := `{"name":%q,"description":"d","main_type":"remote","sub_type":"query","parameters":{"type":"object","properties":{}}}`
	decls := "[" + fmt.Sprintf(query, "get_status") + "," + fmt.Sprintf(query, longA) + "," + fmt.Sprintf(query, longB) + "]"
	attachBar(t, addr, decls, func(_ context.Context, tool string, _ json.RawMessage) (json.RawMessage, *jsonrpc2.Error) {
		return json.RawMessage(fmt.Sprintf(`{"tool":%q}`, tool)), nil
	})
	nameA, nameB := mcpserver.ToolName("kitchen-speaker", longA), mcpserver.ToolName("kitchen-speaker", longB)
	names := mcpclient.WaitListed(t, cs, changed, "kitchen-speaker__get_status", nameA, nameB)
	for _, n := range names {
		if !functionName.MatchString(n) {
			t.Errorf("the tool name %q does not match %s", n, functionName)
		}
	}
	if nameA == nameB || !strings.HasPrefix(nameA, "kitchen-speaker__very_long") || len(nameA) != 64 {
		t.Errorf("the long names are listed as %q and %q; want two distinct 64-byte names starting with the device's", nameA, nameB)
	}
	if again := mcpserver.ToolName("kitchen-speaker", longA); again != nameA {
		t.Errorf("ToolName is not deterministic: %q then %q", nameA, again)
	}
	for name, tool := range map[string]string{nameA: longA, nameB: longB, "kitchen-speaker__get_status": "get_status"} {
		if res := call(t, cs, name, nil); res.IsError || text(res) != fmt.Sprintf(`{"tool":%q}`, tool) {
			t.Errorf("tools/call %s: isError %v %q, want the device's %s", name, res.IsError, text(res), tool)
		}
	}
	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if tool.Name == nameA && (tool.Title != longA+" on kitchen-speaker" || tool.Meta["devicectl/tool"] != longA) {
			t.Errorf("%s: title %q, meta %v; want the device's own tool name in both", nameA, tool.Title, tool.Meta)
		}
	}
}
