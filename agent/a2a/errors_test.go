package a2a

import (
	"errors"
	"fmt"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/devicectl/devicectl/agent"
)

// seed 004's codes come from a2a-go's errors in one place, with the details the A2A paths send.
func TestSeedError(t *testing.T) {
	for _, tc := range []struct {
		err     error
		code    int
		details string
	}{
		{withDetails(a2a.ErrTaskNotFound, unknownTaskDetails("x")), -32602, "Unknown task id: x"},
		{fmt.Errorf("reading: %w", a2a.ErrTaskNotFound), -32602, "reading: task not found"},
		{invalidParams("Missing required parameter: message"), -32602, "Missing required parameter: message"},
		{refusal(&agent.DeviceChoiceError{Asked: "aa", MACs: []string{"bb"}}, 0), -32602, "No device aa is registered; registered: bb"},
		{refusal(fmt.Errorf("busy: %w", agent.ErrTurnLimit), 3), -32603, turnLimitDetails(3)},
		{withDetails(a2a.ErrInvalidRequest, "too big"), -32600, "too big"},
		{a2a.ErrMethodNotFound, -32601, "method not found"},
		{errors.New("disk on fire"), -32603, "disk on fire"},
	} {
		got := seedError(tc.err)
		if got.Code != tc.code || got.Message != messages[tc.code] || got.Data == nil || got.Data.Details != tc.details {
			t.Errorf("seedError(%v) = %d %q %+v, want %d %q %q", tc.err, got.Code, got.Message, got.Data, tc.code, messages[tc.code], tc.details)
		}
	}
}
