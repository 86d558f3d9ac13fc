// Package opentoolhttp speaks the OpenTool client/server protocol over
// HTTP, both sides: NewHandler serves a device's tools to an agent that
// uses an OpenTool SDK, and Client calls another OpenTool server. It treats
// the OpenTool document as json.RawMessage, so that it does not depend on
// the package that models it.
//
// # The protocol
//
// Everything lives under http(s)://host:port/opentool; the SDKs use port
// 9627 (DefaultPort).
//
//	GET  /opentool/version  {"version":"1.0.0"}
//	GET  /opentool/load     the OpenTool document, or {} when there is none
//	POST /opentool/call     {"jsonrpc":"2.0","method":"count","params":{},"id":"1"}
//	                        {"jsonrpc":"2.0","result":{...},"error":null,"id":"1"}
//	                        {"jsonrpc":"2.0","result":{},"error":{"code":-32000,"message":"..."},"id":"1"}
//
// An API key travels as "Authorization: Bearer KEY".
//
// # Server
//
// The handler answers every JSON-RPC failure with HTTP 200 and a body
// that always holds "result", "error" and "id", because the SDK clients
// read the body and look at "error". (A body that cannot be read at all,
// a client gone mid-body, is answered 400 with -32700.) On failure "result" is {}, as in the
// protocol's example: the Dart SDK client decodes "result" as an object
// before it looks at "error", so null there would hide the message.
//
// A /call body is checked before Call runs: not JSON is -32700 Parse
// error; an array (a batch, which this server does not support), a
// non-object, "jsonrpc" other than "2.0" or "2.0.0" (the TypeScript SDK
// sends the latter, and gets it back), a missing, empty or non-string
// "method", "params" that is not an object, or an id that is neither a
// string nor a number is -32600 Invalid Request, whose message says which.
// The codes are those of package protocol.
// An id is echoed as sent; a missing one is answered with null rather than
// not at all. A body over MaxBody is HTTP 413 with a JSON-RPC error.
//
// An RPCError whose data has a string "details" member is sent with the
// details in the message as well ("Invalid params: level: 300 is greater
// than the maximum 100"), because the TypeScript SDK's client keeps only
// the message. /load replaces each {"$ref":"#/schemas/NAME"} by the schema
// it names (HandlerOptions.KeepRefs turns that off): that client cannot
// resolve references.
//
// A browser sends any web page's requests to a port on the user's machine,
// so before anything else the handler refuses what only a page would send:
// a Host outside AllowedHosts (421; DNS rebinding), an Origin that is
// neither the Host nor one of AllowedHosts (403), and a /call whose
// Content-Type is not application/json (415; the only kinds a page can
// POST elsewhere without the browser asking the server first). SDK clients
// send no Origin and application/json.
//
// With APIKeys set, every endpoint wants a valid key and answers 401 with
// WWW-Authenticate otherwise; keys are compared in constant time and never
// logged. A wrong method is 405 with Allow, another path 404; these, and
// /load failures (500), carry a {"code":...,"message":...} body.
//
// # Client
//
// Client's errors are *ClientError, whose Kind follows section 6 of the
// protocol and matches errors.Is:
//
//	ErrUnauthorized  401 or 403: check the API key
//	ErrUnreachable   no connection, DNS, timeout, or 404: is the server running there?
//	ErrResponseNull  empty body, null, or a /call answer with neither result nor error
//	ErrErrorNull     a /call answer whose result and error are both null (or one absent)
//	ErrCall          the server's error object; Code and Message are the server's
//	ErrProtocol      any other status, a body that is not JSON or too large, a wrong id
//
// Their messages are written for a device log and never hold the API key:
//
//	opentool http://10.0.0.5:9627: unauthorized (401): check the API key
//	opentool http://10.0.0.5:9627: not reachable: dial tcp 10.0.0.5:9627: connect: connection refused
//	opentool http://10.0.0.5:9627: call "move" failed (code -32000): motor stalled
//
// Load returns nil and no error when the server has no document: {} or
// null, or the {"code":404,"message":"Json Parser NOT implement"} that the
// SDK servers send then.
package opentoolhttp
