package config

import (
	"time"

	"github.com/devicectl/devicectl/hooks"
)

// HooksConfig names a program to run on each event of the daemon (hooks.Events), with the
// details in DEVICECTL_* environment variables and as JSON on stdin.
type HooksConfig struct {
	Connected    []string
	Registered   []string
	Disconnected []string
	ToolExecuted []string
	FinalReply   []string
	Timeout      time.Duration // each run
}

// Commands maps the configured programs onto hooks' events.
func (c HooksConfig) Commands() map[hooks.Event][]string {
	m := map[hooks.Event][]string{}
	for ev, argv := range map[hooks.Event][]string{
		hooks.Connected:    c.Connected,
		hooks.Registered:   c.Registered,
		hooks.Disconnected: c.Disconnected,
		hooks.ToolExecuted: c.ToolExecuted,
		hooks.FinalReply:   c.FinalReply,
	} {
		if len(argv) > 0 {
			m[ev] = argv
		}
	}
	return m
}

// hookSettings are the hooks section's keys, in the order of configs/devicectl.yaml.
func hookSettings() []setting {
	hc := func(c *Config) *HooksConfig { return &c.Hooks }
	return []setting{
		listKey("hooks.connected", "program run when the line to the server is up, as a list (no shell)", func(c *Config) *[]string { return &hc(c).Connected }),
		listKey("hooks.registered", "program run when the server has accepted the tools", func(c *Config) *[]string { return &hc(c).Registered }),
		listKey("hooks.disconnected", "program run when a line that was up is gone (DEVICECTL_REASON says why)", func(c *Config) *[]string { return &hc(c).Disconnected }),
		listKey("hooks.tool_executed", "program run after each tool call the device ran (DEVICECTL_TOOL, _INPUT, _STATUS, _RESULT, _ERROR_CODE, _ERROR_MESSAGE, _DURATION_MS)", func(c *Config) *[]string { return &hc(c).ToolExecuted }),
		listKey("hooks.final_reply", "program run when an AI reply ends (DEVICECTL_REPLY holds its text)", func(c *Config) *[]string { return &hc(c).FinalReply }),
		durationKey("hooks.timeout", "", "how long one run of a hook may take before it is killed", func(c *Config) *time.Duration { return &hc(c).Timeout }),
	}
}
