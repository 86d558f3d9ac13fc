// Package device is the agent that runs on the board: it dials the AI agent server, declares the
// device's tools with mcp/registerTools, answers the server's mcp/tool/execute calls, and renders
// its mcp/ai/message stream. The wire contract is PROTOCOL.md; protocol.go holds its names, types
// and error codes.
//
// # Session
//
// Agent.Run loops: dial (transport.Dial), register (a request with a fresh string id, answered
// within RegisterTimeout), serve until the line is lost, back off, and start again; every
// connection registers anew. A refused or unanswered registration closes the line and backs off
// like any other failure. Back-off waits are random in [Min, min(Max, Min·2^(n+1))] and start again
// from Min only once a session stayed registered for ResetAfter, so neither a dead server nor one
// that accepts and drops can make a device spin.
//
// # Calls
//
// jsonrpc2 delivers every message from one read loop. Notifications are handled right there, so
// AI messages render strictly in arrival order. An execute is validated against the tool's schema
// (-32602 with data.details on failure), then admitted: up to MaxInFlight calls run at once on
// worker goroutines, and up to MaxQueued more wait in arrival order (past that, -32002 at once).
// Calls that drive the same part (the tool's resources) run one at a time in the order they
// arrived, and a call waiting for its part takes no slot, so a hung part holds up only its own
// queue. A waiting control call that a later call to the same tool replaces is answered
// {"status":"superseded"} without running. The tool's timeout, counted from admission, answers
// -32001 if it fires first, a panic answers -32603, and a tool's own error answers -32000 with its
// message. Each request is answered exactly once.
//
// # Stopping
//
// Cancelling Run's context refuses new calls (-32002), waits up to DrainTimeout for running ones to
// answer, then closes the line with status 1000.
package device
