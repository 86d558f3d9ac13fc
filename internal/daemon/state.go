package daemon

import (
	"sync/atomic"

	"github.com/devicectl/devicectl/device"
)

// connState keeps the agent's latest state for get_device_status, which is built before the
// agent it reports on.
type connState struct{ v atomic.Int32 }

func newConnState() *connState { return &connState{} }

// set is the agent's OnState hook.
func (s *connState) set(st device.State) { s.v.Store(int32(st)) }

func (s *connState) String() string { return device.State(s.v.Load()).String() }
