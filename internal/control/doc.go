// Package control is the local control socket of `devicectl run`: a Unix socket through which
// `devicectl call` runs one of the device's tools on the running daemon, as tailscale's CLI talks
// to tailscaled, instead of opening the hardware a second time.
//
// # Protocol
//
// A client connects, writes one request as a line of JSON, and reads one response line; then
// the daemon closes the connection. The request names the tool and its input (absent: {}), and
// may carry an id, which the response echoes:
//
//	{"tool":"amplify_volume","input":{"level":50}}
//
// The response is the JSON-RPC 2.0 response the device would send the agent server for an
// mcp/tool/execute of that tool, because the daemon runs it through the same dispatcher
// (device.Agent.Call): the input is checked against the tool's schema, the call waits its turn
// for its part and for a slot, and the tool's timeout applies.
//
//	{"jsonrpc":"2.0","id":null,"result":{"status":"success","level":50,...}}
//	{"jsonrpc":"2.0","id":null,"error":{"code":-32602,"message":"Invalid params","data":{"details":"..."}}}
//
// The socket's own errors use the same shape: -32700 for a line that is not JSON, -32600 for a
// request that is too long or malformed (details say which), -32002 when too many clients are
// connected already, -32603 when the daemon stops before the call is answered.
//
// # Access
//
// The socket's mode (0660 by default) is the gate: its owner is the user the daemon runs as,
// its group that user's group, so root and the members of that group may call tools. The server
// refuses requests longer than MaxRequest, drops a client that sends no complete request within
// IdleTimeout, and serves at most MaxClients at once. A call the client leaves still runs to
// its end, which the tool's timeout bounds, like a call of the server.
package control
