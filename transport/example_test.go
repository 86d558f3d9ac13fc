package transport_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/transport"
)

// A server that accepts WebSockets and answers "hello" over JSON-RPC, and a
// device that dials it and calls. Both sides are a Stream under a
// jsonrpc2.Conn.
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, err := transport.Accept(w, r, nil)
		if err != nil {
			return
		}
		deviceID := r.Header.Get("Device-Id")
		conn := transport.NewConn(context.Background(), s, jsonrpc2.HandlerWithError(
			func(ctx context.Context, c *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
				return "hello, " + deviceID, nil
			}), nil)
		<-conn.DisconnectNotify()
	}))
	defer srv.Close()

	ctx := context.Background()
	s, err := transport.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), &transport.DialOptions{
		Header: http.Header{"Device-Id": {"AA-BB-CC-DD-EE-FF"}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	conn := transport.NewConn(ctx, s, jsonrpc2.HandlerWithError(
		func(context.Context, *jsonrpc2.Conn, *jsonrpc2.Request) (any, error) {
			return nil, &jsonrpc2.Error{Code: protocol.CodeMethodNotFound, Message: "Method not found"}
		}), nil)
	defer conn.Close()

	var greeting string
	if err := conn.Call(ctx, "hello", nil, &greeting, jsonrpc2.PickID(jsonrpc2.ID{Str: "call-1", IsString: true})); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(greeting)
	// Output: hello, AA-BB-CC-DD-EE-FF
}

// A device's read loop: Read each message, answer requests with WriteResult
// or WriteError, the id written back exactly as it came. The server here is
// a jsonrpc2.Conn over an accepted Stream, as the agent side runs it.
func ExampleStream_Read() {
	calls := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, err := transport.Accept(w, r, nil)
		if err != nil {
			return
		}
		conn := transport.NewConn(context.Background(), s, jsonrpc2.HandlerWithError(
			func(context.Context, *jsonrpc2.Conn, *jsonrpc2.Request) (any, error) { return nil, nil }), nil)
		defer conn.Close()
		var status string
		err = conn.Call(r.Context(), "get_status", map[string]string{"part": "speaker"}, &status,
			jsonrpc2.PickID(jsonrpc2.ID{Str: "call-1", IsString: true}))
		calls <- fmt.Sprintf("%s %v", status, err)
	}))
	defer srv.Close()

	s, err := transport.Dial(context.Background(), "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			m, err := s.Read()
			if err != nil {
				return // the line is gone
			}
			switch {
			case m.Kind != transport.KindRequest:
				// notifications and responses: none expected here
			case m.Method == "get_status":
				_ = s.WriteResult(m.ID, json.RawMessage(`"idle"`))
			default:
				_ = s.WriteError(m.ID, protocol.CodeMethodNotFound, "Method not found", nil)
			}
		}
	}()
	fmt.Println(<-calls)
	s.Close() // ends Read, and so the loop
	<-done
	// Output: idle <nil>
}
