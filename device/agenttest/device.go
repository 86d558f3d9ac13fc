package agenttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
)

// Device is a registered device as the server sees it.
type Device struct {
	MAC        string
	Tools      []tools.Declaration
	Header     http.Header // the handshake headers it sent
	RemoteAddr string

	srv  *Server
	conn *jsonrpc2.Conn
	done chan struct{}
}

// Done is closed when the device's line is gone or a newer registration of it replaced this one.
func (d *Device) Done() <-chan struct{} { return d.done }

// Execute calls one of the device's tools and returns the response exactly as the device sent it:
// Result set on success, Error set on failure. The error return is for a call that got no answer.
func (d *Device) Execute(ctx context.Context, tool string, input json.RawMessage) (*jsonrpc2.Response, error) {
	id := d.srv.nextCallID()
	params := protocol.ExecuteParams{ToolName: tool, ToolInput: input}
	var result json.RawMessage
	err := d.conn.Call(ctx, protocol.MethodExecute, params, &result, jsonrpc2.PickID(id))
	var rpcErr *jsonrpc2.Error
	switch {
	case err == nil:
		return &jsonrpc2.Response{ID: id, Result: &result}, nil
	case errors.As(err, &rpcErr):
		return &jsonrpc2.Response{ID: id, Error: rpcErr}, nil
	default:
		return nil, fmt.Errorf("calling %s on %s: %w", tool, d.MAC, err)
	}
}

// Message sends one mcp/ai/message notification.
func (d *Device) Message(ctx context.Context, typ, content string) error {
	if err := d.conn.Notify(ctx, protocol.MethodAIMessage, protocol.AIMessage{Type: typ, Content: content}); err != nil {
		return fmt.Errorf("sending ai message to %s: %w", d.MAC, err)
	}
	return nil
}

// Say streams text the way an agent server streams a reply: a few chunks, then a final carrying
// the whole text.
func (d *Device) Say(ctx context.Context, text string) error {
	for _, c := range Chunks(text, 3) {
		if err := d.Message(ctx, protocol.MessageChunk, c); err != nil {
			return err
		}
	}
	return d.Message(ctx, protocol.MessageFinal, text)
}

// Chunks splits text into at most n pieces of about equal length, never inside a character.
func Chunks(text string, n int) []string {
	r := []rune(text)
	if len(r) == 0 || n <= 0 {
		return nil
	}
	if n > len(r) {
		n = len(r)
	}
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, string(r[i*len(r)/n:(i+1)*len(r)/n]))
	}
	return out
}

// Close drops the device's line, as a server restart would.
func (d *Device) Close() error { return d.conn.Close() }
