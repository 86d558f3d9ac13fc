package hub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/devicectl/devicectl/agent/hub"
	"github.com/devicectl/devicectl/agent/hub/hubtest"
)

// A hub mounted on an HTTP server; a device connects, registers, and the server calls its tool.
func Example() {
	h := hub.New(nil)
	srv := httptest.NewServer(h) // any path upgrades to a device line
	defer srv.Close()
	defer h.Close()
	events, stop := h.Subscribe(0)
	defer stop()

	ctx := context.Background()
	dev, err := hubtest.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/ws", &hubtest.Options{
		Handle: func(_ context.Context, tool string, _ json.RawMessage) (json.RawMessage, *jsonrpc2.Error) {
			return json.RawMessage(`{"volume":30}`), nil
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer dev.Close()
	answer, _ := dev.Register(ctx, "aa:bb:cc:dd:ee:ff", hubtest.Tools)
	fmt.Println(string(answer.Result))
	e := <-events
	fmt.Println(e.Kind, e.Device.MAC, len(e.Device.Tools), "tools")

	res, err := h.Call(ctx, "AA-BB-CC-DD-EE-FF", "get_status", json.RawMessage(`{}`))
	fmt.Println(string(res), err)
	// Output:
	// {"status":"registered","message":"Tools were successfully registered."}
	// registered AA-BB-CC-DD-EE-FF 3 tools
	// {"volume":30} <nil>
}
