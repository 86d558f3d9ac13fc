package protocol

import "fmt"

// JSON-RPC 2.0 error codes: the protocol's own five, then the server-defined ones of the device
// protocol. docs/protocol.md's table says when each is answered.
const (
	// CodeParseError: the frame is not JSON. Answered with id null; the line stays up.
	CodeParseError = -32700
	// CodeInvalidRequest: JSON, but not a request or response object (a batch, wrong member
	// types), or a request the peer cannot take now (sent before registering, past a limit).
	CodeInvalidRequest = -32600
	// CodeMethodNotFound: no such method, for a request with an id. A server of seed 002 alone
	// answers the voice methods with it.
	CodeMethodNotFound = -32601
	// CodeInvalidParams: the params are wrong (no such tool, tool_input against its schema, a
	// malformed registration); data.details says exactly what.
	CodeInvalidParams = -32602
	// CodeInternalError: a bug or a panic on the answering side, which keeps running.
	CodeInternalError = -32603

	// CodeServerError (-32000, JSON-RPC's first server-defined code): the request was valid and
	// what it asked for failed. On the device, the tool ran and failed (a hardware error, a
	// refused value) and the message is for a person; on the server, the speech-to-text engine
	// failed; over OpenTool, the tool's Call returned an error.
	CodeServerError = -32000
	// CodeToolTimeout: the tool ran past its timeout.
	CodeToolTimeout = -32001
	// CodeBusy: too many calls are in flight or waiting; try again later.
	CodeBusy = -32002
)

// ErrorData is the data member of an error response: what is wrong, for the person reading the
// log or the model reading the answer.
type ErrorData struct {
	Details string `json:"details"`
}

// Error is an error answer as either side hands it to its own callers: the error object's code
// and message, and its data.details when there is one.
type Error struct {
	Code    int64
	Message string
	Details string
}

func (e *Error) Error() string {
	if e.Details == "" {
		return fmt.Sprintf("%s (%d)", e.Message, e.Code)
	}
	return fmt.Sprintf("%s (%d): %s", e.Message, e.Code, e.Details)
}
