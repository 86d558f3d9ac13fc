package devicerun

import (
	"testing"
	"time"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/device/agenttest"
	"github.com/devicectl/devicectl/internal/testing/standin"
	"github.com/devicectl/devicectl/tools"
)

// A started agent registers with its server, and stop ends its run and its line.
func TestStartAndStop(t *testing.T) {
	srv := standin.Start(t, nil)
	a, err := device.New(&device.Options{URL: srv.URL(), MAC: "02-00-00-00-00-0a", Registry: tools.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	stop := Start(t, a)
	standin.NextRegistration(t, srv)
	stop()
	timeout := time.After(standin.Wait)
	for {
		select {
		case e := <-srv.Events():
			if e.Kind == agenttest.Disconnected {
				stop() // a second stop is a no-op
				return
			}
		case <-timeout:
			t.Fatalf("the device's line was still open %v after stop", standin.Wait)
		}
	}
}
