package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/devicectl/devicectl/agent/hub"
	"github.com/devicectl/devicectl/agent/reminders"
	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
)

// maxLater bounds the control calls running that nobody waits for: a host looping on a control
// tool of a device that does not answer would otherwise pile up a goroutine and a pending call
// each, for as long as CallTimeout.
const maxLater = 64

// successResult is what a control tool answers at once without waiting for the device (seed 002),
// as the agent's turns answer their planner.
var successResult = json.RawMessage(`{"status":"success"}`)

// callDevice runs t on its device through the hub, with seed 002's control/query rules.
func (s *Server) callDevice(ctx context.Context, t deviceTool, args json.RawMessage) (*mcp.CallToolResult, error) {
	args = objectArgs(args)
	h, who := s.opts.Hub, describe(t.device, t.mac)
	decl, err := h.Validate(t.mac, t.decl.Name, args)
	if err != nil {
		return s.deviceError(t, err)
	}
	if decl.SubType == tools.Control && !s.opts.WaitForControl {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return toolError("the agent server is shutting down"), nil
		}
		if s.later >= maxLater {
			s.mu.Unlock()
			return toolError(fmt.Sprintf("%s: device busy (%d): %d control calls are still waiting for their devices' answers", t.name(), protocol.CodeBusy, maxLater)), nil
		}
		s.later++
		// Added under s.mu so that Close, which sets closed under it, waits for every call.
		s.wg.Go(func() {
			defer func() {
				s.mu.Lock()
				s.later--
				s.mu.Unlock()
			}()
			s.callLater(t, args)
		})
		s.mu.Unlock()
		return toolResult(successResult), nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.CallTimeout)
	defer cancel()
	defer context.AfterFunc(s.ctx, cancel)() // Close cancels the calls it would wait for
	res, err := h.Call(ctx, t.mac, t.decl.Name, args)
	if err != nil {
		if ctx.Err() != nil && s.ctx.Err() == nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return toolError(fmt.Sprintf("%s: no answer from the device %s within %s", t.name(), who, s.opts.CallTimeout)), nil
		}
		return s.deviceError(t, err)
	}
	return toolResult(res), nil
}

// callLater runs a control call whose success the caller was already told. Its answer can reach
// no one but the log, where a failure is never lost.
func (s *Server) callLater(t deviceTool, args json.RawMessage) {
	ctx, cancel := context.WithTimeout(s.ctx, s.opts.CallTimeout)
	defer cancel()
	if _, err := s.opts.Hub.Call(ctx, t.mac, t.decl.Name, args); err != nil {
		s.log.Warn("control tool failed after the MCP client was told it succeeded", "mac", t.mac, "tool", t.decl.Name, "err", err)
		return
	}
	s.log.Debug("control tool answered", "mac", t.mac, "tool", t.decl.Name)
}

// deviceError turns what went wrong with a device call into a tool error carrying the detail; an
// error of the caller's own context stays an error (the SDK answers it as a protocol error, and
// the caller has left anyway).
func (s *Server) deviceError(t deviceTool, err error) (*mcp.CallToolResult, error) {
	who := describe(t.device, t.mac)
	var (
		pe *tools.ParamsError
		ce *hub.CallError
	)
	switch {
	case errors.As(err, &pe):
		return toolError(invalidParams(t.name(), pe)), nil
	case errors.As(err, &ce):
		text := fmt.Sprintf("%s: the device %s answered %s (%d)", t.name(), who, ce.Message, ce.Code)
		if ce.Details != "" {
			text += ": " + ce.Details
		} else if len(ce.Data) > 0 && !bytes.Equal(ce.Data, []byte("null")) {
			text += ": " + string(ce.Data)
		}
		return toolError(text), nil
	case errors.Is(err, hub.ErrGone):
		return toolError(fmt.Sprintf("%s: the device %s disconnected before it answered: %v", t.name(), who, err)), nil
	case errors.Is(err, hub.ErrNotRegistered):
		if text, gone := s.goneText(t.name()); gone {
			return toolError(text), nil
		}
		return toolError(fmt.Sprintf("%s: the device %s is not connected", t.name(), who)), nil
	case errors.Is(err, hub.ErrClosed), s.ctx.Err() != nil:
		return toolError(t.name() + ": the agent server is shutting down"), nil
	}
	return nil, err
}

// callAnnounce runs DEVICE__announce: the local announce tool, for t's device.
func (s *Server) callAnnounce(ctx context.Context, t deviceTool, args json.RawMessage) (*mcp.CallToolResult, error) {
	var in struct {
		Text *string `json:"text"`
	}
	dec := json.NewDecoder(bytes.NewReader(objectArgs(args)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil || in.Text == nil {
		details := `arguments must be {"text": "..."}`
		if err != nil {
			details += ": " + err.Error()
		}
		return toolError(fmt.Sprintf("%s: Invalid params (%d): %s", t.name(), protocol.CodeInvalidParams, details)), nil
	}
	local, err := json.Marshal(map[string]string{"text": *in.Text, "mac": t.mac})
	if err != nil {
		return nil, err
	}
	return s.callLocalAs(ctx, t.name(), reminders.ToolAnnounce, local)
}

// callLocal runs one of the server's own tools, with the same validation as a device's.
func (s *Server) callLocal(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	return s.callLocalAs(ctx, name, name, args)
}

// callLocalAs is callLocal for a tool listed as shown, which is what its errors name.
func (s *Server) callLocalAs(ctx context.Context, shown, name string, args json.RawMessage) (res *mcp.CallToolResult, err error) {
	p, err := s.opts.Local.Prepare(name, objectArgs(args))
	if err != nil {
		var pe *tools.ParamsError
		if errors.As(err, &pe) {
			return toolError(invalidParams(shown, pe)), nil
		}
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("local tool panicked", "tool", shown, "panic", r, "stack", string(debug.Stack()))
			res, err = toolError(fmt.Sprintf("%s: Internal error (%d): %v", shown, protocol.CodeInternalError, r)), nil
		}
	}()
	v, err := p.Invoke(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return toolError(fmt.Sprintf("%s: %v", shown, err)), nil
	}
	raw, ok := v.(json.RawMessage)
	if !ok {
		if raw, err = json.Marshal(v); err != nil {
			return toolError(fmt.Sprintf("%s: Internal error (%d): the result is not JSON: %v", shown, protocol.CodeInternalError, err)), nil
		}
	}
	return toolResult(raw), nil
}

// invalidParams says what the schema refused, naming the value as an MCP host sent it: the
// tools package's "tool_input" (the device protocol's member) is MCP's "arguments".
func invalidParams(name string, pe *tools.ParamsError) string {
	d := pe.Details
	if rest, ok := strings.CutPrefix(d, "tool_input"); ok {
		d = "arguments" + rest
	}
	return fmt.Sprintf("%s: Invalid params (%d): %s", name, protocol.CodeInvalidParams, d)
}

// objectArgs makes absent arguments an empty object: MCP hosts leave them out of a call to a tool
// without parameters, where the device protocol wants a tool_input.
func objectArgs(args json.RawMessage) json.RawMessage {
	if t := bytes.TrimSpace(args); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return json.RawMessage(`{}`)
	}
	return args
}

// toolResult is a result as MCP hosts read it: the JSON as text, and as structured content when it
// is an object (MCP's structuredContent).
func toolResult(raw json.RawMessage) *mcp.CallToolResult {
	r := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(raw)}}}
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '{' {
		r.StructuredContent = json.RawMessage(t)
	}
	return r
}

// toolError is a failure of the tool, which the host's model reads and may act on.
func toolError(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}
