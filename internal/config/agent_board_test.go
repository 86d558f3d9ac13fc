//go:build devicectl_omit_serve && devicectl_omit_sim

package config

import (
	"reflect"
	"strings"
	"testing"
)

// A board runs no agent: the agent and llm sections of a file shared with a laptop or a server
// are read past, whatever they hold, and change nothing; the rest of the file is read as anywhere.
func TestBoardIgnoresAgentSections(t *testing.T) {
	for _, k := range Keys(Defaults()) {
		if strings.HasPrefix(k.Name, "agent.") || strings.HasPrefix(k.Name, "llm.") {
			t.Errorf("%s is compiled into a board build", k.Name)
		}
	}
	for _, doc := range []string{
		"agent:\n  listen: not even host:port\n  planner: gpt\n  whatever: [1, 2]\nllm:\n  base_url: ftp://x/v1\n",
		"agent: [1, 2]\nllm: 7\n",
		"agent:\nllm:\n",
	} {
		c := Defaults()
		if err := Parse([]byte(doc), c); err != nil {
			t.Errorf("%q: %v", doc, err)
		} else if !reflect.DeepEqual(c, Defaults()) {
			t.Errorf("%q changed the config: %+v", doc, c)
		}
	}
	checkParseErrors(t, []parseError{
		{"agent:\n  listen: x\nconnection:\n  ping_interval: soon\n", `connection.ping_interval: "soon" is not a duration`},
		{"agentx:\n  listen: x\n", "agentx: unknown key"},
		{"device:\n  agent:\n    listen: x\n", "device.agent: unknown key"},
	})
}
