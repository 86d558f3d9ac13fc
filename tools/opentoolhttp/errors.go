package opentoolhttp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
)

// The kinds of *ClientError, for errors.Is. They follow the exceptions of
// the protocol's section 6, plus ErrProtocol for answers it does not cover.
var (
	// ErrUnauthorized: the server answered 401 or 403; the API key is
	// missing or wrong.
	ErrUnauthorized = errors.New("unauthorized")
	// ErrUnreachable: no answer (connection refused, DNS, TLS, timeout, a
	// connection cut mid-answer) or HTTP 404, which the protocol also
	// reads as "no OpenTool server at this address".
	ErrUnreachable = errors.New("not reachable")
	// ErrResponseNull: the server answered, but with nothing: an empty
	// body, JSON null, or (for /call) an object with neither a "result"
	// nor an "error" member.
	ErrResponseNull = errors.New("response is null")
	// ErrErrorNull: a /call answer that has a "result" or "error" member,
	// but both are null or absent: the server claims success without a
	// result. ErrResponseNull and ErrErrorNull never both apply: the first
	// is an answer with neither member, the second one with at least one
	// of them present and null.
	ErrErrorNull = errors.New("error is null but there is no result")
	// ErrCall: the server answered the call with an error object.
	// ClientError.Code and Message are the server's.
	ErrCall = errors.New("call failed")
	// ErrProtocol: an answer this client cannot use: another HTTP status,
	// a body that is not JSON or not the expected shape, a body over
	// ClientOptions.MaxResponse, or an id that is not the request's.
	ErrProtocol = errors.New("protocol error")
)

// ClientError is the error of every Client method that got as far as the
// network. Kind says which of the Err* kinds it is (or context.Canceled
// when the caller cancelled); errors.Is matches both Kind and Err. It never
// holds the API key: any text from the server is redacted.
type ClientError struct {
	// Kind is one of ErrUnauthorized, ErrUnreachable, ErrResponseNull,
	// ErrErrorNull, ErrCall, ErrProtocol, or context.Canceled.
	Kind error
	// Server is the server's root URL, as the error message shows it.
	Server string
	// Op is what was attempted: "version", "load" or `call "name"`.
	Op string
	// Status is the HTTP status of the answer; 0 when there was none.
	Status int
	// Code is the JSON-RPC error code when Kind is ErrCall.
	Code int64
	// Message is the detail: for ErrCall the server's message as sent
	// (redacted); for ErrProtocol a short description with an excerpt of
	// the body.
	Message string
	// Data is the "data" member of the server's error object, if any.
	Data []byte
	// Err is the underlying error (a network or decoding error), if any.
	Err error
}

func (e *ClientError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "opentool %s: ", e.Server)
	switch {
	case errors.Is(e.Kind, ErrUnauthorized):
		fmt.Fprintf(&b, "unauthorized (%d): check the API key", e.Status)
	case errors.Is(e.Kind, ErrUnreachable) && e.Status != 0:
		fmt.Fprintf(&b, "not reachable: HTTP %d for %s: check that the OpenTool server runs at this address", e.Status, e.Op)
	case errors.Is(e.Kind, ErrUnreachable) && isTimeout(e.Err):
		fmt.Fprintf(&b, "not reachable: no answer in time: %v", e.Err)
	case errors.Is(e.Kind, ErrUnreachable):
		fmt.Fprintf(&b, "not reachable: %v", e.Err)
	case errors.Is(e.Kind, ErrCall):
		fmt.Fprintf(&b, "%s failed", e.Op)
		if e.Code != 0 {
			fmt.Fprintf(&b, " (code %d)", e.Code)
		}
		msg := oneLine(e.Message, 300)
		if msg == "" {
			msg = "the server gave no message"
		}
		b.WriteString(": " + msg)
	default: // the null kinds, ErrProtocol, cancellation
		fmt.Fprintf(&b, "%s: %v", e.Op, e.Kind)
		if e.Message != "" {
			b.WriteString(": " + e.Message)
		}
		if e.Err != nil && !errors.Is(e.Kind, e.Err) {
			fmt.Fprintf(&b, ": %v", e.Err)
		}
	}
	return b.String()
}

// Unwrap lets errors.Is and errors.As see both the kind and the cause, so
// that errors.Is(err, ErrUnreachable) and errors.Is(err,
// context.DeadlineExceeded) can both hold.
func (e *ClientError) Unwrap() []error {
	errs := []error{e.Kind}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}
