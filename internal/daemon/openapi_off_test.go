//go:build !openapi

package daemon

import (
	"strings"
	"testing"

	"github.com/devicectl/devicectl/internal/config"
)

// Without the openapi build tag, an OpenAPI tool set is refused with how to get one.
func TestOpenAPINotBuiltIn(t *testing.T) {
	c := simConfig(t, "ws://127.0.0.1:1/", "AA-BB-CC-DD-EE-FF")
	c.ToolSets.OpenAPI = []config.OpenAPISetConfig{config.DefaultOpenAPISet()}
	c.ToolSets.OpenAPI[0].Spec = "/etc/devicectl/weather.yaml"
	err := refusedStart(t, c)
	if err == nil || !strings.Contains(err.Error(), "toolsets.openapi[1]: this devicectl is built without OpenAPI tool sets; build it with the openapi tag") {
		t.Errorf("Run = %v, want the build tag named", err)
	}
}
