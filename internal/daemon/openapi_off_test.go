//go:build !openapi

package daemon

import (
	"strings"
	"testing"

	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/testing/logbuf"
)

// Without the openapi build tag, an OpenAPI tool set is refused with how to get one.
func TestOpenAPINotBuiltIn(t *testing.T) {
	c := config.Defaults()
	c.Server.URL = "ws://127.0.0.1:1/"
	c.Device.MAC = "AA-BB-CC-DD-EE-FF"
	c.Device.StateDir = t.TempDir()
	c.Hardware.Mode = "sim"
	c.ToolSets.OpenAPI = []config.OpenAPISetConfig{config.DefaultOpenAPISet()}
	c.ToolSets.OpenAPI[0].Spec = "/etc/devicectl/weather.yaml"
	var stderr logbuf.Buffer
	err := New(c, &Options{Stderr: &stderr, Getenv: func(string) string { return "" }}).Run(t.Context())
	if err == nil || !strings.Contains(err.Error(), "toolsets.openapi[1]: this devicectl is built without OpenAPI tool sets; build it with the openapi tag") {
		t.Errorf("Run = %v, want the build tag named", err)
	}
}
