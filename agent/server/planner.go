//go:build !devicectl_omit_serve || !devicectl_omit_sim

package server

import (
	"fmt"
	"log/slog"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/agent/llm"
	"github.com/devicectl/devicectl/agent/rules"
	"github.com/devicectl/devicectl/internal/config"
)

// newPlanner builds the planner agent.planner names: the rule planner, or the llm section's
// OpenAI-compatible endpoint (its key read from llm.api_key_file).
func newPlanner(c *config.Config, log *slog.Logger) (agent.Planner, error) {
	switch c.Agent.Planner {
	case config.PlannerRules:
		return rules.New(&rules.Options{Location: c.Agent.Location()}), nil
	case config.PlannerLLM:
		key := ""
		if c.LLM.APIKeyFile != "" {
			var err error
			if key, err = config.ReadToken("llm.api_key_file", c.LLM.APIKeyFile, log); err != nil {
				return nil, err
			}
		}
		p, err := llm.New(&llm.Options{BaseURL: c.LLM.BaseURL, Model: c.LLM.Model, APIKey: key, Location: c.Agent.Location(), Logger: log})
		if err != nil {
			return nil, &config.Error{Key: "llm.base_url", Err: err}
		}
		return p, nil
	}
	return nil, &config.Error{Key: "agent.planner", Err: fmt.Errorf("%q is not a planner", c.Agent.Planner)}
}
