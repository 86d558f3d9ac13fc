//go:build !openapi

package main

import (
	"io"
	"strings"
	"testing"
)

// Without the openapi build tag, an OpenAPI tool set is refused with how to get one.
func TestOpenAPINotBuiltIn(t *testing.T) {
	c := Defaults()
	c.Server.URL = "ws://127.0.0.1:1/"
	c.Device.MAC = "AA-BB-CC-DD-EE-FF"
	c.Device.StateDir = t.TempDir()
	c.Hardware.Mode = "sim"
	c.ToolSets.OpenAPI = []OpenAPISetConfig{defaultOpenAPISet()}
	c.ToolSets.OpenAPI[0].Spec = "/etc/devicectl/weather.yaml"
	var stderr lockedBuffer
	err := runDaemon(t.Context(), c, daemonIO{stdout: io.Discard, stderr: &stderr, getenv: func(string) string { return "" }})
	if err == nil || !strings.Contains(err.Error(), "toolsets.openapi[1]: this devicectl is built without OpenAPI tool sets; build it with the openapi tag") {
		t.Errorf("runDaemon = %v, want the build tag named", err)
	}
}
