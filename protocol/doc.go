// Package protocol is what the device and the agent server share of the device protocol
// (docs/protocol.md, seed 002, and its voice extension): the method names, the names of the
// device's built-in tools that the agent calls by name, the JSON-RPC error codes, the message
// shapes and the MAC address grammar. Both halves import it and meet only on the wire, so a name,
// a code or a shape defined here is defined nowhere else.
//
// The package imports the standard library only (a test checks it), so that hal, transport and
// the board binary can take it for nothing.
//
// # Error codes
//
// One constant per code: JSON-RPC 2.0's own five, which seed 004's error table uses too (with its
// own messages), and the server-defined ones of the device protocol, within -32000..-32099. Other
// JSON-RPC servers of the project (OpenTool over HTTP, the MCP server, the control socket) answer
// with the same constants.
//
// # MAC addresses
//
// ParseMAC reads six hex pairs, in either case, joined all by '-', all by ':', or not at all
// (twelve hex digits), and returns them as the protocol writes mac_addr: upper case, joined by
// '-' (AA-BB-CC-DD-EE-FF). The '-' form is the protocol's own; ':' is how ip link and Go's
// net.HardwareAddr write an address; the bare digits are how labels and many configs write it,
// and the device's config has always taken them. The device's config, the server's registration,
// and every place a person names a device (the console, the A2A metadata, the MCP aliases) read a
// MAC with this one grammar, so an address one side takes is one the other takes. Anything else,
// mixed separators, other groupings, spaces, is refused with an error that says what is wrong.
// ParseMACPrefix reads the first one to five pairs of an address in the same grammar (02-DC,
// 02:dc, 02dc), for a tool that numbers the addresses after them.
package protocol
