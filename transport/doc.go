// Package transport carries JSON-RPC 2.0 over one WebSocket: the device dials
// the agent server (Dial), the server side accepts (Accept), and both get a
// Stream, a github.com/sourcegraph/jsonrpc2 ObjectStream. It knows nothing of
// tools or devices.
//
// # Framing
//
// One JSON-RPC message travels in one WebSocket text frame; batches are not
// used. Stream.ReadObject looks at every frame before jsonrpc2 does, because
// any error it returned would close jsonrpc2's whole connection, and because
// jsonrpc2 v0.2.3 accepts some messages it then mangles (a negative id turns
// into a huge unsigned one). A frame that is not JSON is answered with -32700
// Parse error; a binary frame, a batch, a non-object, or an object that breaks
// the JSON-RPC 2.0 rules (wrong "jsonrpc", a method that is not a string, an id
// that is not a string or a non-negative integer, params that are neither
// object nor array, a response with both or neither of result and error) is
// answered with -32600 Invalid Request, echoing the id when it is readable,
// with data.details saying what is wrong. Reading then goes on. A response to
// a call nobody made goes to jsonrpc2, which ignores it. An error response
// that jsonrpc2 cannot use (no id, a bad id) is logged and dropped, never
// answered: every answer this package sends is such an error response, and
// answering those would let two peers bounce errors forever.
//
// # Keepalive and the line's lifetime
//
// Each Stream owns a goroutine that pings every PingInterval; a pong missing
// for PingTimeout means the line is half-open (a NAT forgot it, the peer lost
// power), so the Stream closes it and Err wraps ErrPingTimeout. Pongs are only
// seen while someone reads, so ReadObject must run continuously: jsonrpc2's
// read loop does, as long as handlers return quickly.
//
// Writes carry no deadline each (a runtime timer per write costs more than
// the rest of the write path); a watchdog goroutine closes the line when
// writes have been pending for WriteTimeout without one completing.
//
// Done is closed once the line is gone, for whatever reason; Err says why.
// Close sends a close frame (1000), waits a bounded time for the peer's reply
// and for the Stream's goroutines. A message over ReadLimit (1 MiB by default)
// closes the connection with 1009; the process carries on and the caller
// reconnects.
//
// # Speed
//
// jsonrpc2 decodes a message in three passes through a map and encodes one
// through nested marshals. Since the classifier has already found every
// member, the Stream builds jsonrpc2's message itself and writes jsonrpc2's
// messages itself, after checking at run time that jsonrpc2's internal
// message type has the layout it expects; with any other jsonrpc2 it falls
// back to encoding/json. Fuzz tests hold both ways to the same
// result. A request's params reach the handler as the bytes received.
//
// # Security
//
// TLS verification is on by default; TLSOptions builds a tls.Config from a CA
// file and a client certificate for mutual TLS. InsecureSkipVerify makes every
// Dial log a warning. The bearer token goes only into the Authorization header
// and never into a log line or an error message.
//
// # Use
//
//	s, err := transport.Dial(ctx, "wss://agent.example/ws", &transport.DialOptions{Token: token})
//	if err != nil { ... }
//	conn := transport.NewConn(ctx, s, handler, logger)
//	defer conn.Close()
//	<-conn.DisconnectNotify() // or s.Done(); s.Err() says why
package transport
