package device

import (
	"context"
	"encoding/json"

	"github.com/devicectl/devicectl/protocol"
)

// Where a call came from, in CallReport.Via.
const (
	ViaServer = "server" // an mcp/tool/execute of the agent server
	ViaLocal  = "local"  // Agent.Call: a client on the device's side, such as the OpenTool server
)

// CallError is a call answered with a JSON-RPC error: the code (protocol.CodeInvalidParams,
// CodeServerError, CodeToolTimeout, CodeBusy, CodeInternalError) and message the server would
// have been sent, and the details of the error's data member, if any.
type CallError = protocol.Error

// Call runs one call for a client on the device's side, exactly as an mcp/tool/execute of the
// agent server would run: the input is validated against the tool's schema, the call counts
// against MaxInFlight and MaxQueued, waits its turn for its hardware, and is bounded by the tool's
// timeout. It returns
// the result as JSON, or a *CallError with the code the server would have been answered.
//
// Local calls do not need the line: they are served while the agent is disconnected or backing
// off, and a drain for a Restart waits for them too. They are refused once the agent is stopping
// (Run's context is done).
// Cancelling ctx cancels the tool's context and makes Call return at once.
func (a *Agent) Call(ctx context.Context, name string, input json.RawMessage) (json.RawMessage, error) {
	d := a.disp
	answer := make(chan localAnswer, 1) // never blocks run, whether or not anyone still waits
	if refused := d.submit(ctx, d.settings.Load(), name, input, ViaLocal, localReply{ctx, answer}); refused != nil {
		return nil, refused
	}
	select {
	case ans := <-answer:
		return ans.result, ans.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type localAnswer struct {
	result json.RawMessage
	err    error
}

// localReply hands a call's answer to Agent.Call.
type localReply struct {
	ctx context.Context // the caller's: once it is done, nobody reads the answer
	ch  chan<- localAnswer
}

func (r localReply) result(_ context.Context, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if r.ctx.Err() != nil {
		return errNotSent
	}
	r.ch <- localAnswer{result: b}
	return nil
}

func (r localReply) fail(code int64, message, details string) {
	r.ch <- localAnswer{err: &CallError{Code: code, Message: message, Details: details}}
}
