// Package httpguard keeps web pages from driving an HTTP server that only its own clients should
// reach: the agent server of `devicectl serve` and `devicectl sim --web`, whose default is an open
// loopback port that every browser on the machine can send requests to.
//
// A Guard wraps the whole server (Guard.Handler) and checks each request, in this order:
//
//   - Host. The request's Host must be one of the server's own names: an IP literal (any address,
//     any port), localhost or a name under .localhost, or one of Options.Hosts (agent/server gives the
//     listen address's host, agent.public_url's host, agent.allowed_hosts and the machine's own
//     host name, short, as os.Hostname says it and with .local). Any other is refused with 421
//     Misdirected Request. This defeats DNS rebinding: a page at http://rebind.evil.example:8765/
//     whose name the attacker pointed at 127.0.0.1 talks to the server as "same origin", but its
//     requests still say Host: rebind.evil.example:8765. IP literals pass because rebinding
//     always needs a DNS name (a page at http://127.0.0.1:8765/ is the server's own), and a
//     server listening on all addresses is reached by each of the machine's addresses. The
//     machine's own names pass because a LAN device dials ws://HOSTNAME:PORT/, and an attacker
//     owns no name the local resolver answers for the machine itself.
//   - Origin, on the requests that change state: every method but GET, HEAD and OPTIONS, every
//     WebSocket handshake (whatever its method: a browser opens one from any page, and CORS does
//     not apply to it), and what Options.Strict names (agent/server: /mcp, whose GET opens a session's
//     event stream). A request from another origin (Sec-Fetch-Site same-site or cross-site, else
//     an Origin whose host and port are not the Host's) is refused with 403 unless its Origin is
//     in Options.Origins (agent.allowed_origins); for those the Guard answers CORS, preflights
//     included. A request without Origin and Sec-Fetch-Site is not a browser's cross-origin one
//     (devices, curl, the A2A and MCP SDKs send none) and passes. A request carrying the bearer
//     token (Options.Token) passes too: the token is not a credential a browser adds on its own.
//   - Content type, on the same methods: a request with a body must declare it application/json
//     (charset, if given, UTF-8), else 415. A page may send a text/plain or form POST to any
//     address without the browser asking the server first; application/json it cannot. Every
//     body the agent server takes is JSON.
//
// Every refusal is answered in plain text saying what was refused and which configuration key
// would allow it, and logged once as a warning "refused request" with the details as attributes.
package httpguard
