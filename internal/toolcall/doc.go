// Package toolcall runs one of the device's tools for `devicectl call`: on the running daemon,
// through its control socket, so the call takes its turn with the server's; or, with no daemon,
// on the parts the config describes, opened for the call and left as the tool left them.
// Either way the answer is what the device would send a server: a result, or its JSON-RPC error.
package toolcall
