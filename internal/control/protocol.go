package control

import (
	"encoding/json"
	"errors"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/protocol"
)

// Request is one line a client sends.
type Request struct {
	ID    json.RawMessage `json:"id,omitempty"`    // echoed in the response; absent: null
	Tool  string          `json:"tool"`            // the tool's name (required)
	Input json.RawMessage `json:"input,omitempty"` // the tool's input; absent: {}
}

// Response is the line the daemon answers with: a JSON-RPC 2.0 response, with exactly one of
// Result and Error.
type Response struct {
	JSONRPC string          `json:"jsonrpc"` // "2.0"
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// Error is a JSON-RPC error object, as the device answers the server with.
type Error struct {
	Code    int64               `json:"code"`
	Message string              `json:"message"`
	Data    *protocol.ErrorData `json:"data,omitempty"`
}

func (e *Error) Error() string {
	ce := device.CallError{Code: e.Code, Message: e.Message}
	if e.Data != nil {
		ce.Details = e.Data.Details
	}
	return ce.Error()
}

// ErrorOf turns a device.Agent.Call error into the error object the server would have been
// answered with; an error that is not a *device.CallError (the daemon stopping under the call)
// is -32603.
func ErrorOf(err error) *Error {
	var ce *device.CallError
	if !errors.As(err, &ce) {
		return newError(protocol.CodeInternalError, "Internal error", err.Error())
	}
	return newError(ce.Code, ce.Message, ce.Details)
}

func newError(code int64, message, details string) *Error {
	e := &Error{Code: code, Message: message}
	if details != "" {
		e.Data = &protocol.ErrorData{Details: details}
	}
	return e
}

var nullID = json.RawMessage("null")
