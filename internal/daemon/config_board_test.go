//go:build devicectl_omit_serve && devicectl_omit_sim

package daemon

import (
	"os"
	"testing"

	"github.com/devicectl/devicectl/internal/config"
)

// A board binary compiles no agent keys, yet reads a config file written for a server too: the
// packaged example, and agent and llm sections it does not look inside.
func TestBoardReadsServerSections(t *testing.T) {
	data, err := os.ReadFile("../../configs/devicectl.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := config.Parse(data, config.Defaults()); err != nil {
		t.Errorf("the packaged config: %v", err)
	}
	doc := "agent:\n  listen: not even host:port\n  whatever: [1, 2]\nllm:\n  model: x\nserver:\n  url: ws://127.0.0.1:1/\n"
	if err := config.Parse([]byte(doc), config.Defaults()); err != nil {
		t.Errorf("agent and llm sections: %v", err)
	}
	for _, k := range config.Keys(config.Defaults()) {
		if k.Name == "agent.listen" {
			t.Error("the board build compiles the agent's keys")
		}
	}
	if err := config.Parse([]byte("agentx:\n  listen: x\n"), config.Defaults()); err == nil {
		t.Error("an unknown section was accepted")
	}
}
