// Package netlimit bounds what a peer can make an HTTP server hold: open connections (in all and
// per IP address), the time to send a request's body, the time a client may take to read each
// write of the response (streams included), and the size of a request's body. The agent server
// (agent/server) serves through it with agent.limits.* from the configuration; the timeouts
// of a request's header and of a kept-alive idle connection are http.Server's own
// (ReadHeaderTimeout, IdleTimeout).
//
// # Connections
//
// Listener wraps a net.Listener. Past Options.PerAddress connections from one IP address, a new
// one from that address is closed at once. At Options.Connections open connections, a new one
// takes the place of the connection that has held no request the longest (accepted and silent,
// a header not yet whole, or kept alive between requests), which is closed: a flood of idle
// connections cannot keep a normal client out, and closing an idle connection is what a
// server's shutdown does too. The server says which connections hold no request through
// ConnState, set as its http.Server.ConnState. When every connection holds a request (streams
// being read, device lines), the listener stops accepting until one closes, and new clients wait
// in the kernel's listen queue. (A connection is accepted before the one it replaces is closed:
// for a moment the process holds one socket more than the cap.) Counts are released when a connection is closed, once however
// often it is closed, hijacked ones (WebSocket device lines) included. The first time a cap is
// reached, and then at most every LogEvery, a warning says so.
//
// Drain, registered with http.Server.RegisterOnShutdown, closes at shutdown the connections that
// have sent nothing, which net/http would otherwise wait 5 s for.
//
// Connections is lowered to the process's open-file limit less FileReserve (see
// Options.FileLimit): a cap above it would let a flood take every descriptor, and then nothing,
// not even a normal request or the database, could open one.
//
// # Requests
//
// Handler wraps an http.Handler:
//
//   - a request's body must arrive within BodyTimeout of the handler starting (a read deadline
//     set per request rather than http.Server's ReadTimeout, which counts the header's time too,
//     and net/http lifts it once the body is read); a body that is late is answered 408;
//   - each Write and Flush of the response, and the end of the response, must reach the client
//     within WriteTimeout: the deadline moves with each write, so a stream that is read goes on
//     for as long as it has something to say, and one whose reader stalls is dropped (the write
//     fails, the request's context is canceled, the connection is closed);
//   - a body over RequestBytes is answered 413, before the handler when its Content-Length says
//     so, instead of the handler's answer otherwise;
//   - an answer 401, 403, 408, 413 or 429 closes the connection (Connection: close): a refused
//     client does not keep a socket.
//
// The ResponseWriter it hands on keeps http.Flusher, http.Hijacker and Unwrap, so
// http.ResponseController and WebSocket upgrades work through it. A hijacked connection is out
// of all of this: net/http clears its deadlines on Hijack, and nothing here sets them again.
package netlimit
