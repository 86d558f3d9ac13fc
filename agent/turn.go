// Package agent is the agent server: it hears a person or another agent, plans with a Planner,
// calls the tools of a device (over the device protocol) and its own, and streams the reply.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
)

// Request is one thing said to the agent: by a person at a console, an A2A client or a web page.
type Request struct {
	Text      string // what was said
	MAC       string // the device the turn talks to; "" picks the only one registered
	UserID    string // whose memories the turn may use; "" is the default user
	SessionID string // turns of one session share their history; "" starts a fresh one
	TaskID    string // the A2A task the turn runs for, "" for none: what it sets up later (a reminder) can push to it
}

// EventKind says what an Event carries.
type EventKind uint8

// The events of a turn, in the order a turn may produce them. A turn ends with exactly one
// EventFinal or EventError.
const (
	// EventStarted is the first event of a turn the agent accepted (its device is picked and it
	// holds one of Options.MaxTurns): the planner starts. A turn refused at once yields only an
	// EventError, so a front door can tell a refusal from a slow planner without waiting for it.
	EventStarted    EventKind = iota + 1
	EventThought              // Text: the planner's reasoning, where it gives any
	EventChunk                // Text: a piece of the streamed reply
	EventToolCall             // Tool, Input: a tool is being called
	EventToolResult           // Tool, Result or Err: what it answered
	EventFinal                // Text: the whole reply; the turn is over
	EventError                // Err: the turn failed; it is over
)

func (k EventKind) String() string {
	switch k {
	case EventStarted:
		return "started"
	case EventThought:
		return "thought"
	case EventChunk:
		return "chunk"
	case EventToolCall:
		return "tool_call"
	case EventToolResult:
		return "tool_result"
	case EventFinal:
		return "final"
	case EventError:
		return "error"
	}
	return fmt.Sprintf("EventKind(%d)", uint8(k))
}

// Event is one step of a turn, as a front door (console, A2A, web page) shows it.
type Event struct {
	Kind   EventKind
	Text   string
	Tool   string
	Input  json.RawMessage
	Result json.RawMessage
	Err    error
}

// Exchange is one earlier turn of a session, for planners that keep a conversation.
type Exchange struct {
	User  string // what was said
	Reply string // the final reply
}

// TurnContext is what a Planner sees of one turn. Its methods are safe for concurrent use.
type TurnContext interface {
	// Request is what was said, and to which device and user.
	Request() Request
	// History is the session's earlier exchanges, oldest first.
	History() []Exchange
	// Tools are the tools the planner may call now: the device's (main_type remote) and the
	// server's own (main_type local), each with its JSON Schema.
	Tools() []tools.Declaration
	// Call runs a tool and returns its result. The input is checked against the tool's schema
	// first (a *ToolError with protocol.CodeInvalidParams names the problem). A device's control tool
	// answers {"status":"success"} at once without waiting for the device, unless the agent is
	// configured to wait; a query tool waits for the device's answer. A device error is a
	// *ToolError; a device that is gone is ErrDeviceGone.
	Call(ctx context.Context, name string, input json.RawMessage) (json.RawMessage, error)
	// Chunk streams a piece of the reply to the device and the caller.
	Chunk(text string)
	// Thought streams a piece of the planner's reasoning (shown only where enabled).
	Thought(text string)
}

// Planner decides what a turn does: which tools to call, and what to reply. It streams the reply
// with TurnContext.Chunk; the agent then sends the final, which is the chunks joined. A planner
// returns an error only when the turn failed (an LLM that cannot be reached, say), not when it
// did not understand: then it says so in its reply.
type Planner interface {
	Plan(ctx context.Context, t TurnContext) error
}

// ToolError is a tool call answered with an error: by the device (its JSON-RPC error) or by a
// local tool.
type ToolError = protocol.Error

// ErrDeviceGone is a call to, or a turn on, a device whose line dropped.
var ErrDeviceGone = errors.New("agent: the device disconnected")

// ErrNoDevice is a turn that needs a device when none is registered.
var ErrNoDevice = errors.New("agent: no device is registered")

// DeviceChoiceError is a turn that did not say which device, or named one that is not registered,
// while MACs are.
type DeviceChoiceError struct {
	Asked string   // the MAC asked for; "" when none was named
	MACs  []string // the devices registered
}

func (e *DeviceChoiceError) Error() string {
	if e.Asked == "" {
		return fmt.Sprintf("agent: several devices are registered, name one in metadata.mac: %s", strings.Join(e.MACs, ", "))
	}
	return fmt.Sprintf("agent: no device %s is registered (registered: %s)", e.Asked, strings.Join(e.MACs, ", "))
}
