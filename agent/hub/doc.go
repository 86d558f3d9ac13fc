// Package hub is the agent server's side of the device protocol (docs/protocol.md, seed 002) for many
// devices at once, each known by its MAC address.
//
// A Hub is an http.Handler: a WebSocket upgrade on any path becomes a device line. Each line has
// one read loop (the handler's own goroutine) that answers mcp/registerTools and hands tool-call
// answers to whoever waits for them; nothing else reads the line. The rest of the server talks to
// devices through the Hub:
//
//   - Call sends mcp/tool/execute and waits for the answer or the context; CallRaw also keeps the
//     answer's frame for a console that prints it as received.
//   - Send streams mcp/ai/message notifications (chunk, final, thought) in the order sent.
//   - Devices lists the registered devices; Validate checks a tool input against the schema the
//     device declared; Done tells when a registration ends.
//   - Subscribe delivers what happens (registered, tools changed, disconnected, a call done) to a
//     console or a web page.
//
// # Registration
//
// Every mcp/registerTools gets an answer: {"status":"registered",...}, or -32602 Invalid params
// with data.details naming the problem (a MAC that is not six hex pairs, a tool whose name,
// description, types or JSON Schema the tools package refuses). A MAC is written as the protocol
// writes it, upper-case pairs joined by '-'; lower case and ':' are accepted and normalised.
// Registering again on the same line updates the tools (a ToolsChanged event when they differ).
//
// # A second registration for a connected MAC
//
// A MAC is served by one line at a time. A registration for a MAC that another live line holds:
//
//   - replaces that line when both carry the same non-empty Client-Id header: it is the same device
//     back on a new line while its old one died unnoticed (a NAT forgot it, keepalive has not yet
//     fired). The old line is closed, its pending calls fail with ErrGone, and the change is logged
//     and published (Disconnected with ErrReplaced, then Registered).
//   - is refused otherwise (-32602, data.details naming the MAC, the live line's remote address
//     and since when it is connected), logged at warn; the live device keeps serving. So a process
//     on the server's host can no longer take a live device's MAC and answer its calls.
//
// A device without a Client-Id that lost its line unnoticed is therefore refused until the
// server's keepalive notices the old line is dead (ping interval plus ping timeout); its back-off
// retries then succeed.
//
// A line that registered one MAC cannot register another: it is refused the same way. A line that
// has not registered within Options.RegisterTimeout (30 s by default) is closed.
//
// # Tokens
//
// With Options.Tokens set, a WebSocket handshake without "Authorization: Bearer <token>" naming one
// of them is refused with 401 before the upgrade, tokens compared in constant time. Unset, the hub
// is open: the development default, for a server on loopback.
//
// # Lifetime
//
// Close closes every line and waits for every goroutine the hub started: the read loops, the
// closing of replaced lines, and the transport's own. Calls in flight fail with ErrGone, and
// subscriptions' channels are closed.
package hub
