package device_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/device/agenttest"
	"github.com/devicectl/devicectl/internal/testing/logbuf"
	"github.com/devicectl/devicectl/internal/testing/standin"
	"github.com/devicectl/devicectl/protocol"
)

// A refused registration is logged with the server's reason, data.details, not only its code and
// message: "Invalid params" alone does not say that the MAC is bound to another client.
func TestRefusalLogsDetails(t *testing.T) {
	checkLeaks(t)
	const why = "MAC AA-BB-CC-DD-EE-FF is bound to another client: the operator frees it with `forget AA-BB-CC-DD-EE-FF`"
	data := json.RawMessage(`{"details":` + mustJSON(t, why) + `}`)
	var refused atomic.Bool
	srv := standin.Start(t, &agenttest.Options{Register: func(context.Context, *agenttest.Device) *jsonrpc2.Error {
		if refused.Swap(true) {
			return nil
		}
		return &jsonrpc2.Error{Code: protocol.CodeInvalidParams, Message: "Invalid params", Data: &data}
	}})
	logs := &logbuf.Buffer{}
	a := newAgent(t, device.Options{URL: srv.URL(), Logger: slog.New(slog.NewTextHandler(logs, nil))})
	runAgent(t, a)
	waitDevice(t, srv)
	if got := logs.String(); !strings.Contains(got, "registration refused: -32602 Invalid params: "+why) {
		t.Errorf("the log does not give the server's reason:\n%s", got)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
