package opentoolhttp

import (
	"encoding/json"
	"testing"

	"github.com/devicectl/devicectl/protocol"
)

// The last-resort answer spells protocol.CodeInternalError out; it must say that code.
func TestInternalErrorAnswer(t *testing.T) {
	var r response
	if err := json.Unmarshal([]byte(internalErrorAnswer), &r); err != nil || r.Error == nil || r.Error.Code != protocol.CodeInternalError {
		t.Errorf("%s: %+v, %v; want code %d", internalErrorAnswer, r.Error, err, protocol.CodeInternalError)
	}
}
