package hub

import (
	"encoding/json"
	"fmt"
	"time"
)

// EventKind says what happened.
type EventKind uint8

// The events a subscription receives.
const (
	Registered   EventKind = iota + 1 // Device registered (on a new line, or replacing its old one)
	ToolsChanged                      // Device registered again on its line with other tools
	Disconnected                      // Device's registration ended; Reason says why
	Refused                           // a registration was refused; Device is who asked, Reason why
	CallDone                          // a tool call ended: Tool, Input, Result, Duration, Err
	Heard                             // a person said Text to Device (mcp/user/text or audio transcribed)
)

func (k EventKind) String() string {
	switch k {
	case Registered:
		return "registered"
	case ToolsChanged:
		return "tools_changed"
	case Disconnected:
		return "disconnected"
	case Refused:
		return "refused"
	case CallDone:
		return "call_done"
	case Heard:
		return "heard"
	}
	return fmt.Sprintf("EventKind(%d)", uint8(k))
}

// Event is one thing that happened to a device.
type Event struct {
	Kind   EventKind
	Device Device // the device as it was then
	Reason error  // Disconnected, Refused: why
	Tool   string // CallDone
	// Input and Result are CallDone's input as sent and success result as received (nil on an
	// error); they share memory with the call, do not modify them.
	Input    json.RawMessage
	Result   json.RawMessage
	Duration time.Duration // CallDone: from sending the call to its answer
	Err      error         // CallDone: the call's error (a *CallError, ErrGone, ...), nil on success
	// Heard: what was said, where from ("voice" when heard) and the turn it starts.
	Text   string
	Source string
	TurnID string
}

// DefaultEventBuffer is how many events a subscription holds for a slow reader when Subscribe is
// given no size.
const DefaultEventBuffer = 256

type subscription struct {
	ch      chan Event
	dropped int
}

// Subscribe returns a channel of the hub's events, in the order each device's events happened,
// and a function that ends the subscription and closes the channel. A reader that falls more than
// buffer events behind loses events (each loss is logged) rather than stalling the hub. buffer <=
// 0 means DefaultEventBuffer. Close also closes the channel.
//
// Each device's events come in the order they happened on its line; CallDone events come from
// the calling goroutines, so one may arrive after its device's Disconnected.
func (h *Hub) Subscribe(buffer int) (<-chan Event, func()) {
	if buffer <= 0 {
		buffer = DefaultEventBuffer
	}
	s := &subscription{ch: make(chan Event, buffer)}
	h.subMu.Lock()
	if h.subs == nil || h.isClosed() {
		h.subMu.Unlock()
		close(s.ch)
		return s.ch, func() {}
	}
	h.subs[s] = struct{}{}
	h.subMu.Unlock()
	return s.ch, func() {
		h.subMu.Lock()
		defer h.subMu.Unlock()
		if _, ok := h.subs[s]; ok {
			delete(h.subs, s)
			close(s.ch)
		}
	}
}

func (h *Hub) isClosed() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.closed
}

func (h *Hub) emit(e Event) {
	h.subMu.Lock()
	defer h.subMu.Unlock()
	for s := range h.subs {
		select {
		case s.ch <- e:
		default:
			s.dropped++
			if s.dropped&(s.dropped-1) == 0 { // 1, 2, 4, 8...: a stalled reader must not flood the log
				h.log.Warn("events dropped: a subscriber is not reading", "event", e.Kind, "mac", e.Device.MAC, "dropped", s.dropped)
			}
		}
	}
}
