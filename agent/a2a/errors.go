package a2a

import (
	"errors"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

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
	details := err.Error()
	var ae *a2a.Error
	if errors.As(err, &ae) {
		if d, ok := ae.Details["details"].(string); ok {
			details = d
		}
	}
	return &rpcError{Code: code, Message: messages[code], Data: &rpcErrorData{Details: details}}
}

// withDetails is an a2a-go error of kind kind whose data carries {"details": details}.
func withDetails(kind error, details string) error {
	return a2a.NewError(kind, details).WithDetails(map[string]any{"details": details})
}

// unknownTaskDetails is data.details of a task id not stored, on both doors.
func unknownTaskDetails(id string) string { return "Unknown task id: " + id }
