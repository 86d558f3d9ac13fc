package main

import (
	"sync"
	"sync/atomic"

	"github.com/devicectl/devicectl/device"
)

// connState keeps the agent's latest state for get_device_status, which is built before the
// agent it reports on, and tells when the agent first registered.
type connState struct {
	v          atomic.Int32
	once       sync.Once
	registered chan struct{} // closed on the first Registered
}

func newConnState() *connState { return &connState{registered: make(chan struct{})} }

// set is the agent's OnState hook.
func (s *connState) set(st device.State) {
	s.v.Store(int32(st))
	if st == device.Registered {
		s.once.Do(func() { close(s.registered) })
	}
}

func (s *connState) String() string { return device.State(s.v.Load()).String() }
