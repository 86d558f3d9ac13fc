// Package device is the agent that runs on the board: it dials the AI agent server, declares the
// device's tools with mcp/registerTools, answers the server's mcp/tool/execute calls, and renders
// its mcp/ai/message stream. The wire contract is docs/protocol.md; protocol.go holds its names, types
// and error codes.
//
// # Session
//
// Agent.Run loops: dial (transport.Dial), register (a request with a fresh string id, answered
// within RegisterTimeout), serve until the line is lost, back off, and start again; every
// connection registers anew. A refused or unanswered registration closes the line and backs off
// like any other failure. Back-off waits are random in [Min, min(Max, Min·2^(n+1))]. A line that
// was registered and then served (answered a call, or stayed up Backoff.ResetAfter, 3s by
// default) starts the count again from Min; one that fails before registering, or is dropped right
// after, keeps it climbing, so neither a dead server nor one that accepts and drops can make a
// device spin.
//
// Run's goroutine owns the session: the options in force, the line, the state and the back-off.
// Restart and SetRegistry hand it their changes through a one-slot inbox (a later change is folded
// into one still pending) and return at once; State and Check read a snapshot it publishes.
//
// # The line
//
// Each connection has one reader (line.go), the only reader of the stream. The server's executes
// go to the dispatcher, which admits or refuses them at once. A call that starts at once with
// nothing ahead of it runs right on the reader, which costs less than waking a worker; if it is
// still running 0.75 ms after it started, a watch (line_watch.go) starts another
// goroutine reading the line, and the one running the call serves as a worker once it returns.
// So no tool holds up the line for longer. Calls that wait their turn run on the dispatcher's
// workers. Unknown methods are answered -32601;
// notifications are handled right there, so AI messages render strictly in arrival order, never
// two at once; answers to the device's own requests go to whoever waits for them, found by the
// id's raw bytes. Ids are echoed as received,
// byte for byte. The loop waits for the session to take the answer to a registration before it
// reads on, so a call right behind the acceptance already sees the session registered.
// The method names, error codes and message shapes are package protocol's, shared with the agent;
// sourcegraph/jsonrpc2 supplies only the Error type of an error response (transport.Message).
//
// # Calls
//
// An execute is validated against the tool's schema (-32602 with data.details on failure), then
// admitted: up to MaxInFlight calls run at once, and up to MaxQueued more wait
// in arrival order (past that, -32002 at once). Calls that drive the same part (the tool's
// resources) run one at a time in the order they arrived, and a call waiting for its part takes no
// slot, so a hung part holds up only its own queue. A waiting control call that a later call to the
// same tool replaces is answered {"status":"superseded"} without running. The tool's timeout,
// counted from admission, answers -32001 if it fires first, a panic answers -32603, and a tool's
// own error answers -32000 with its message. Each request is answered exactly once.
//
// # Voice
//
// Beyond seed 002, the device sends what the person said (user.go): UserText (mcp/user/text),
// UserAudio (mcp/user/audio) and Interrupt (mcp/user/interrupt), from any goroutine, on the line
// that is registered; their answers come back through the read loop like the registration's. The
// registration answer may list the server's features; a server whose list leaves voice out is
// not asked, and one that answers -32601 (seed 002) is asked no more on that line. Either way the
// agent logs once per server that it does not take voice, and serves its tools as before.
//
// # Stopping
//
// Cancelling Run's context refuses new calls (-32002), waits up to DrainTimeout for running ones to
// answer, then closes the line with status 1000.
package device
