package a2a

import (
	"errors"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/devicectl/devicectl/protocol"
)

// Seed 004's error table; the A2A paths use the same JSON-RPC codes for the same kinds.
const (
	codeParse          = protocol.CodeParseError
	codeInvalidRequest = protocol.CodeInvalidRequest
	codeNoMethod       = protocol.CodeMethodNotFound
	codeInvalidParams  = protocol.CodeInvalidParams
	codeInternal       = protocol.CodeInternalError
)

var messages = map[int]string{
	codeParse:          "Invalid JSON payload",
	codeInvalidRequest: "Request payload validation error",
	codeNoMethod:       "Method not found",
	codeInvalidParams:  "Invalid parameters",
	codeInternal:       "Internal error",
}

// seedCodes map a2a-go's errors to seed 004's table, first match first; anything else is
// -32603. The seed answers an unknown task, or one that cannot take the request, as a bad
// parameter, where A2A has codes of its own for them.
var seedCodes = []struct {
	err  error
	code int
}{
	{a2a.ErrParseError, codeParse},
	{a2a.ErrInvalidRequest, codeInvalidRequest},
	{a2a.ErrMethodNotFound, codeNoMethod},
	{a2a.ErrInvalidParams, codeInvalidParams},
	{a2a.ErrTaskNotFound, codeInvalidParams},
	{a2a.ErrTaskNotCancelable, codeInvalidParams},
	{a2a.ErrUnsupportedOperation, codeInvalidParams},
}

// a2aCodes are the A2A paths' codes of the errors answered before a2a-go reads a request
// (writeA2AError); a2a-go answers the rest with the same codes.
var a2aCodes = map[error]int{
	a2a.ErrParseError:      codeParse,
	a2a.ErrInvalidRequest:  codeInvalidRequest,
	a2a.ErrMethodNotFound:  codeNoMethod,
	a2a.ErrInvalidParams:   codeInvalidParams,
	a2a.ErrInternalError:   codeInternal,
	a2a.ErrTaskNotFound:    -32001,
	a2a.ErrServerError:     -32000,
	a2a.ErrUnauthenticated: -31401,
}

// seedError is err in seed 004's shape: its code from seedCodes, data.details the details an
// *a2a.Error carries ({"details": ...}, as the A2A paths send them), else err's text.
func seedError(err error) *rpcError {
	code := codeInternal
	for _, c := range seedCodes {
		if errors.Is(err, c.err) {
			code = c.code
			break
		}
	}
	return &rpcError{Code: code, Message: messages[code], Data: &rpcErrorData{Details: errDetails(err)}}
}

// errDetails is data.details of err: the details an *a2a.Error carries, else err's text.
func errDetails(err error) string {
	var ae *a2a.Error
	if errors.As(err, &ae) {
		if d, ok := ae.Details["details"].(string); ok {
			return d
		}
	}
	return err.Error()
}

// withDetails is an a2a-go error of kind kind whose data carries {"details": details}.
func withDetails(kind error, details string) error {
	return a2a.NewError(kind, details).WithDetails(map[string]any{"details": details})
}

// invalidParams is a -32602 whose first data entry carries {"details": details}.
func invalidParams(details string) error {
	return a2a.NewError(a2a.ErrInvalidParams, "Invalid parameters: "+details).
		WithDetails(map[string]any{"details": details})
}

// unknownTaskDetails is data.details of a task id not stored, on both doors.
func unknownTaskDetails(id string) string { return "Unknown task id: " + id }

// busyDetails is data.details of a message to a task whose turn still runs, on both doors.
func busyDetails(id a2a.TaskID) string {
	return "Task " + string(id) + " is still working; wait for it or cancel it"
}
