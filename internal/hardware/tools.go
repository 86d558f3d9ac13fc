package hardware

import (
	"fmt"
	"strings"

	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/tools"
	"github.com/devicectl/devicectl/tools/builtin"
)

// NewRegistry returns the device's own tools on hw, with the per-tool timeouts of c applied (the
// config has checked that each names a tool; one whose part is missing is skipped with it).
// version is reported by get_device_status; connState reports the session state there, nil
// meaning unknown.
func NewRegistry(hw *Hardware, c *config.Config, version string, connState func() string) (*tools.Registry, error) {
	r := tools.NewRegistry()
	err := builtin.Register(r, &builtin.Options{
		Speaker:   hw.Speaker,
		Face:      hw.Face,
		Language:  c.Device.Language,
		Version:   version,
		ConnState: connState,
		Instant:   hw.Instant,
	})
	if err != nil {
		return nil, fmt.Errorf("registering built-in tools: %w", err)
	}
	for name, d := range c.Execution.ToolTimeouts {
		if t, ok := r.Lookup(name); ok {
			t.Timeout = d
		}
	}
	return r, nil
}

// ToolNames lists the names of r's tools, for logs and hooks.
func ToolNames(r *tools.Registry) string {
	var names []string
	for _, t := range r.Tools() {
		names = append(names, t.Name)
	}
	return strings.Join(names, ", ")
}
