package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/devicectl/devicectl/device/agenttest"
)

// The stand-in server and the config the run tests share.

func startStandIn(t *testing.T, opts *agenttest.Options) *agenttest.Server {
	t.Helper()
	srv, err := agenttest.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// nextRegistration returns the next registration srv sees, skipping disconnections.
func nextRegistration(t *testing.T, srv *agenttest.Server) *agenttest.Device {
	t.Helper()
	for {
		select {
		case e := <-srv.Events():
			if e.Kind == agenttest.Registered {
				return e.Device
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no registration within 10s")
		}
	}
}

func description(d *agenttest.Device, tool string) string {
	for _, tl := range d.Tools {
		if tl.Name == tool {
			return tl.Description
		}
	}
	return ""
}

func baseConfig(t *testing.T, url string) string {
	return fmt.Sprintf(`server:
  url: %s
device:
  mac: AA-BB-CC-DD-EE-FF
  state_dir: %s
  language: en
connection:
  ping_interval: 1s
hardware:
  mode: sim
log:
  level: debug
`, url, t.TempDir())
}
