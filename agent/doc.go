// Package agent is the agent server's core: it runs turns. A turn is one thing said to the agent
// (a Request, from a console, an A2A client or a web page); a Planner decides which tools to call
// and what to reply, and the agent carries that out under seed 002's server rules, reporting each
// step as an Event. The devices are reached through a hub.Hub (package agent/hub), only on the
// wire: this package never imports package device.
//
// # A turn
//
// Agent.Turn returns an iter.Seq[Event]. Iterating it picks the device, runs the planner with a
// TurnContext and yields, in order: EventStarted, then thoughts, chunks, tool calls and their
// results, then exactly one EventFinal (the reply, the chunks joined) or EventError. A turn
// refused before its planner runs (no such device, too many turns) yields only the EventError:
// EventStarted, which comes at once, tells a front door the turn was accepted, so that it can
// answer its caller (A2A's working status) without waiting for a planner that may take seconds
// to its first word. A turn that fails still yields what
// happened before the failure, then the error. Stopping the loop early cancels the turn; every
// goroutine a turn starts has ended when the loop does.
//
// The device of a turn is Request.MAC (lower case and ':' accepted), else the only registered
// device. A MAC that is not registered is a *DeviceChoiceError listing those that are (or
// ErrNoDevice when none is); several devices and none named is a *DeviceChoiceError listing them.
// With no device registered, a turn still runs when the agent has local tools, with those only:
// the planner can calculate or remember without a robot, and a call to any other tool fails with
// an error wrapping ErrNoDevice (a planner that returns it ends the turn with it). With no device
// and no local tools, the turn fails at once with ErrNoDevice.
//
// # Tools
//
// TurnContext.Tools lists the device's tools (main_type remote) and then Options.Local, the
// server's own (main_type local). A device tool named like a local one is hidden: a device cannot
// override the server's tools. TurnContext.Call checks the input against the tool's declared JSON
// Schema first, with the tools package, for device and local tools alike: a failure is a
// *ToolError with protocol.CodeInvalidParams whose Details name the problem, and nothing is called.
//
//   - A device's control tool (sub_type control) answers the planner {"status":"success"} at once,
//     without waiting for the device (seed 002), unless Options.WaitForControl. The call goes on:
//     the device's answer is logged and yielded as the call's EventToolResult, an error as such;
//     the reply's final goes to the device without waiting for it, and the turn's EventFinal comes
//     once the answer is in. A control call still unanswered at the turn's deadline reports the
//     deadline as its result; the turn, whose reply is out, still ends with EventFinal.
//   - A query tool waits for the device; a device error is a *ToolError with the device's code,
//     message and data.details; a device that drops is ErrDeviceGone.
//   - A local tool runs in process; its error is a *ToolError (protocol.CodeServerError unless it
//     returned a *ToolError itself), a panic protocol.CodeInternalError.
//
// # The reply
//
// TurnContext.Chunk streams a piece of the reply to the device (mcp/ai/message chunk) and to the
// caller (EventChunk); Thought does the same with type thought. When the planner returns, the
// device gets one final with the chunks joined. A turn that fails after chunks went out also
// sends a final with them, so the device's half-shown reply ends.
//
// # Deadlines and drops
//
// A turn has a deadline (Options.TurnTimeout, 60 s by default): past it the planner's context ends
// and the turn ends with an error wrapping ErrTurnTimeout and context.DeadlineExceeded. A device
// that drops (or is replaced, see agent/hub) during its turn ends the turn with ErrDeviceGone,
// whatever the planner was doing. Planners must honour their context: the turn waits for the
// planner to return before it ends.
//
// # Limits
//
// Options.MaxTurns (agent.limits.turns) bounds the turns running at once, from every front door
// together (A2A, the seed's routes, the web page, the console): one past it is refused at once
// with an error wrapping ErrTurnLimit that names the key and the limit, and a log line.
//
// # History
//
// Turns with the same Request.SessionID share a history (TurnContext.History), kept in memory and
// bounded: Options.HistoryLen exchanges per session, and the 1024 most recently used sessions.
package agent
