package opentoolhttp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"

	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools/opentoolhttp"
)

// A device serves an "add" tool over the OpenTool protocol, and a client
// calls it: once successfully, once with an error the tool reports.
func Example() {
	h, err := opentoolhttp.NewHandler(&opentoolhttp.HandlerOptions{
		Version: "1.0.0",
		APIKeys: []string{"device-key"},
		Load: func(context.Context) (json.RawMessage, error) {
			return json.RawMessage(`{"opentool":"1.0.0","info":{"title":"calculator","version":"1.0.0"}}`), nil
		},
		Call: func(ctx context.Context, name string, params json.RawMessage) (any, error) {
			if name != "add" {
				return nil, &opentoolhttp.RPCError{Code: protocol.CodeMethodNotFound, Message: "no function " + name}
			}
			var in struct{ A, B float64 }
			if err := json.Unmarshal(params, &in); err != nil {
				return nil, &opentoolhttp.RPCError{Code: protocol.CodeInvalidParams, Message: err.Error()}
			}
			return map[string]float64{"sum": in.A + in.B}, nil
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := httptest.NewServer(h) // in a device: http.Server{Addr: ":9627", Handler: h}
	defer srv.Close()

	c, err := opentoolhttp.NewClient(srv.URL, &opentoolhttp.ClientOptions{APIKey: "device-key"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.CloseIdleConnections()
	ctx := context.Background()

	version, err := c.Version(ctx)
	fmt.Println("version:", version, err)
	doc, err := c.Load(ctx)
	fmt.Println("document:", string(doc), err)
	result, err := c.Call(ctx, "add", json.RawMessage(`{"a":2,"b":3}`))
	fmt.Println("add:", string(result), err)

	_, err = c.Call(ctx, "divide", nil)
	var ce *opentoolhttp.ClientError
	if errors.As(err, &ce) && errors.Is(err, opentoolhttp.ErrCall) {
		fmt.Printf("divide: code %d: %s\n", ce.Code, ce.Message)
	}
	// Output:
	// version: 1.0.0 <nil>
	// document: {"opentool":"1.0.0","info":{"title":"calculator","version":"1.0.0"}} <nil>
	// add: {"sum":5} <nil>
	// divide: code -32601: no function divide
}
