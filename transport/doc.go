// Package transport carries JSON-RPC 2.0 over one WebSocket: the device
// dials the agent server (Dial), the server side accepts (Accept), and both
// get a Stream. It knows nothing of tools or devices.
//
// # Reading and writing
//
// The device runs its own read loop: Stream.Read returns each well-formed
// message parsed once, as a Message whose id, params and result are the
// bytes received; WriteResult, WriteError, WriteRequest and
// WriteNotification write one frame each, the id exactly as given. So an id
// is echoed byte for byte, whatever its spelling (docs/protocol.md), and the
// params reach a handler undecoded.
//
// The agent's hub runs the same kind of loop over the Streams it accepts.
// github.com/sourcegraph/jsonrpc2 remains for its Error type (Message.Error)
// and for a peer that wants its connection loop: a Stream is also a
// jsonrpc2.ObjectStream, and NewConn runs a jsonrpc2.Conn over it, decoding
// and encoding through jsonrpc2's own types with encoding/json. The test
// stand-in server (device/agenttest) is such a peer; no product code is.
//
// # Framing
//
// One JSON-RPC message travels in one WebSocket text frame; batches are not
// used. Every frame is checked before it is read (classify), because a
// reader must never see a message two decoders would read differently, and
// because any error jsonrpc2 returned would close its whole connection. A
// frame that is not JSON is answered with -32700 Parse error; a binary
// frame, a batch, a non-object, or an object that breaks the JSON-RPC 2.0
// rules (wrong "jsonrpc", a method that is not a string, an id that is not a
// string or a number, params that are neither object nor array, a response
// with both or neither of result and error, a member named like a known one
// but in another case, a repeated member) is answered with -32600 Invalid
// Request, echoing the id when it is readable, with data.details saying what
// is wrong. Reading then goes on.
//
// Any number is an id, negative, fractional or with an exponent, and any
// string escape, a lone surrogate included, since the id is kept as bytes. A
// string id that is not valid UTF-8 is refused: its echo could not travel in
// a text frame. ReadObject refuses more, the ids jsonrpc2 would change on the
// way back (negative, fractional, beyond int64, lone surrogates), so a
// jsonrpc2 peer never answers under another id.
//
// An error response nobody can use (no id, a malformed error object) is
// logged and dropped, never answered: every answer this package sends is
// such an error response, and answering those would let two peers bounce
// errors forever. A response to a call nobody made is the reader's business.
//
// # Keepalive and the line's lifetime
//
// Each Stream owns a goroutine that pings every PingInterval; a pong missing
// for PingTimeout means the line is half-open (a NAT forgot it, the peer lost
// power), so the Stream closes it and Err wraps ErrPingTimeout. Pongs are only
// seen while someone reads, so Read (or ReadObject) must run continuously.
//
// Writes carry no deadline each (a runtime timer per write costs more than
// the rest of the write path); a watchdog closes the line when writes have
// been pending for WriteTimeout without one completing. Both watchdogs are
// timers, not goroutines: an idle line costs its reader's goroutine only.
//
// On a dialled line, the frames written while the reader works through what
// its last read of the socket brought wait, and go out in one write before it
// reads again, or at Flush, or when the line closes (coalesce.go): a peer that
// sends several requests at once gets their answers in one write. A reader
// that may be held up (running a tool) calls Flush at least every millisecond.
//
// Done is closed once the line is gone, for whatever reason; Err says why.
// Close sends a close frame (1000), waits a bounded time for the peer's reply
// and for a ping in flight. A message over ReadLimit (1 MiB by default)
// closes the connection with 1009; the process carries on and the caller
// reconnects.
//
// # Security
//
// TLS verification is on by default; the caller passes a tls.Config
// (internal/config builds one from a CA file and a client certificate for
// mutual TLS), and the package reads no files. InsecureSkipVerify makes every
// Dial log a warning. The bearer token goes only into the Authorization header
// and never into a log line or an error message.
//
// # Use
//
//	s, err := transport.Dial(ctx, "wss://agent.example/ws", &transport.DialOptions{Token: token})
//	if err != nil { ... }
//	defer s.Close()
//	for {
//		m, err := s.Read()
//		if err != nil {
//			return err // the line is gone; s.Err() says why
//		}
//		if m.Kind == transport.KindRequest {
//			_ = s.WriteResult(m.ID, result)
//		}
//	}
package transport
