// Package devicerun runs a device agent (device.Agent.Run) for a test on a goroutine the test
// owns, and stops it: the run is cancelled and waited for, and one that does not end cleanly fails
// the test.
package devicerun

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/devicectl/devicectl/device"
)

// StopWait bounds how long stop waits for Run to return. A passing run never reaches it; it is
// generous because a stop under -race and heavy load (the chaos tests) drains slowly.
const StopWait = 20 * time.Second

// Start runs a until the returned stop, which cancels Run's context and waits for Run to return,
// failing t unless it returns nil within StopWait. stop may be called more than once, and is
// called when the test ends.
func Start(t testing.TB, a *device.Agent) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("device Run returned %v after a stop, want nil", err)
				}
			case <-time.After(StopWait):
				t.Errorf("device Run did not return within %v of the stop", StopWait)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}
