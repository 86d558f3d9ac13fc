//go:build devicectl_omit_mcpsets

package daemon

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/devicectl/devicectl/internal/config"
)

// errNoMCP is why a build with the devicectl_omit_mcpsets tag (the board builds) refuses
// toolsets.mcp: the MCP Go SDK would take the armv6 binary past its 9 MiB budget.
var errNoMCP = errors.New("this devicectl is built without MCP tool sets (the devicectl_omit_mcpsets tag of the board builds); make build includes them")

func newMCPSource(i int, _ config.MCPSetConfig, _ string, _ *slog.Logger, _ func(string)) (toolSource, error) {
	return nil, &config.Error{Key: fmt.Sprintf("toolsets.mcp[%d]", i+1), Err: errNoMCP}
}
