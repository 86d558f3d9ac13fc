//go:build devicectl_omit_serve && devicectl_omit_sim

package config

// A board binary runs no agent: its keys are not compiled in, and the agent and llm sections of
// a config file shared with a server are read as ignored (ignoredSections), not as unknown keys.
func agentKeys() []setting { return nil }

// agentSections is empty: a board binary compiles no agent or llm settings.
type agentSections struct{}

func defaultAgentSections() agentSections { return agentSections{} }

func init() { ignoredSections = []string{"agent", "llm"} }
