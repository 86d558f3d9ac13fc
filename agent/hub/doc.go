// Package hub is the agent server's side of the device protocol (docs/protocol.md, seed 002) for many
// devices at once, each known by its MAC address.
//
// A Hub is an http.Handler: a WebSocket upgrade on any path becomes a device line. Each line has
// one read loop (a goroutine of the hub's; the handler returns once the line is open) that
// answers mcp/registerTools and hands tool-call answers to whoever waits for them; nothing else
// reads the line. The rest of the server talks to devices through the Hub:
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
// # Limits
//
// Compiling a device's schemas is what a registration costs: a MiB of them took 45 MB and seconds
// of CPU. So a registration declares at most Options.MaxTools tools in at most
// Options.MaxSchemaBytes bytes of params.tools (agent.limits.tools_per_device and
// agent.limits.schema_bytes; 128 and 256 KiB by default), and both are checked on the raw bytes
// before anything is decoded: a registration far over the size is refused on its length alone,
// the tools are counted by scanning, and only then decoded and compiled. A refusal is -32602 with
// data.details naming the limit, its value and what was sent.
//
// # Bindings: a MAC belongs to the Client-Id that registered it first
//
// A device sends a Client-Id header, a UUID kept in its state directory. The first registration
// of a MAC with a Client-Id binds the MAC to it, in Options.Bindings (the agent's database,
// SQLBindings, table hub_bindings; in memory by default). From then on a registration of that
// MAC with another Client-Id, or with none, is refused (-32602, data.details saying the MAC is
// bound to another client and how to free it), even while the bound device is offline: a process
// that takes a MAC cannot get its device's calls and answer them. The bound Client-Id is never
// told to the refused line.
//
// The binding moves in two ways:
//
//   - the operator forgets it: Forget, `forget MAC` at the serve console, or POST
//     /devices/{mac}/forget (ForgetHandler, behind agent.token_file's bearer token). The next
//     device to register the MAC binds it; a device registered now keeps its line.
//   - a device that presented a valid device token (Options.Tokens) registers the MAC: the token
//     is the authority, and the MAC is bound to its Client-Id (logged at warn). With device tokens
//     set, every line presents one, so bindings guard the servers without them.
//
// A device without a Client-Id registers a free MAC without binding it.
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
// retries then succeed. The rule holds whatever the bindings say: a device token or a forgotten
// binding lets a device take a MAC whose device is offline, never one whose device is live.
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
// # What a person says (VOICE.md)
//
// With Options.Listener set, the registration answer lists "features":["user/text","user/audio"]
// and a registered device may send mcp/user/text (answered at once {"status":"accepted",
// "turn_id":...}), mcp/user/audio (16 kHz mono pcm_s16le in base64, at most
// Options.MaxUtterance; answered once transcribed, with the text, or {"status":"empty"}) and
// the notification mcp/user/interrupt (the running turn's context ends with ErrInterrupted).
// The read loop only checks and queues them: a worker, which runs while a line has requests
// waiting, transcribes them and runs the turns in order, one at a time, so a device's session
// keeps the order things were said.
// At most Options.UserQueue requests wait per line; more are answered -32002. Bad audio is
// -32602 with data.details; an engine that fails is -32000 with its error. Each accepted text is
// logged at info and published as a Heard event. Without a Listener the hub answers these
// methods -32601, as a seed-002 server does.
//
// # A cluster of nodes
//
// With Options.Cluster set (agent/cluster, over NATS), the hub is one node of several that share
// their devices. A device is on one node's line; the others know of it from the cluster, and
// Devices, Device, MACs, Done, Validate and Tool show every node's devices (Device.Node names the
// node). Call, CallRaw and Send reach a device on another node through the cluster, with the
// same answers and errors as on a line of this node: a device whose node is gone, or that moves
// to another node before it answers, fails the call with ErrGone. Subscribers see the other
// nodes' devices registered, changing tools, and leaving (Disconnected with ErrMoved when the
// device registered on another node), and the calls made on their lines (CallDone) and what
// people said to them (Heard), whoever made the call.
//
// A registration claims its MAC in the cluster before it is decided (Cluster.Claim). The node
// that holds the MAC is asked, and applies the rules above as if the second registration came to
// it: a live line of another client is kept, and the registration refused with the same
// details; a line of the same device (same Client-Id) is closed and the MAC moves; a node with
// no live line for it, or no longer there at all, gives it up at once. A registration that the
// cluster cannot decide (NATS unreachable, the holder silent) is refused -32603, and the device
// tries again after its back-off. The bindings are checked as on one node; for the same rules
// on every node they must be in a database the nodes share. A line whose MAC another node takes
// over (it lost its hold while cut off from the cluster) is closed.
//
// # Lifetime
//
// Close closes every line and waits for every goroutine the hub started: the read loops, the
// closing of replaced lines, and the transport's own. Calls in flight fail with ErrGone, and
// subscriptions' channels are closed.
package hub
