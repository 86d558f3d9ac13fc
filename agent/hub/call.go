package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
	"github.com/devicectl/devicectl/transport"
)

// CallError is a device's JSON-RPC error answer to a tool call.
type CallError struct {
	MAC     string
	Tool    string
	Code    int64
	Message string
	Data    json.RawMessage // the error's data member as received; nil when absent
	Details string          // data.details, when data is an object with a string details
}

func (e *CallError) Error() string {
	s := fmt.Sprintf("device %s: %s: %s (%d)", e.MAC, e.Tool, e.Message, e.Code)
	if e.Details != "" {
		s += ": " + e.Details
	}
	return s
}

// Response is a device's answer to a tool call.
type Response struct {
	// Raw is the answer's frame, rebuilt from the parsed message with its id, result and error
	// data exactly as received: what a console prints "as received".
	Raw json.RawMessage
	// Result is the success result as received; nil for an error answer.
	Result json.RawMessage
	// Err is the device's error answer; nil for a success.
	Err *CallError
}

// Call runs a tool on the device registered as mac: it sends mcp/tool/execute and waits for the
// answer or ctx. It returns the device's result, or: a *CallError for an error answer; an error
// wrapping ErrGone when the line drops (or is replaced) before the answer; ErrNotRegistered; or
// ctx's error. The input is sent as given: Validate checks it against the declared schema. In a
// cluster, a device on another node is called through it, with the same answers and errors.
func (h *Hub) Call(ctx context.Context, mac, tool string, input json.RawMessage) (json.RawMessage, error) {
	resp, err := h.CallRaw(ctx, mac, tool, input)
	if err != nil {
		return nil, err
	}
	if resp.Err != nil {
		return nil, resp.Err
	}
	return resp.Result, nil
}

// CallRaw is Call returning the whole answer: an error answer is a Response with Err set and a nil
// error; the error is only for an answer that never came.
func (h *Hub) CallRaw(ctx context.Context, mac, tool string, input json.RawMessage) (*Response, error) {
	l, r, err := h.lineOf(mac)
	if err != nil {
		return nil, err
	}
	if l == nil {
		return h.callRemote(ctx, r, tool, input)
	}
	return h.callLine(ctx, l, r, tool, input)
}

// callLine is CallRaw on a line of this node.
func (h *Hub) callLine(ctx context.Context, l *line, r *registration, tool string, input json.RawMessage) (*Response, error) {
	id := h.nextID.Add(1)
	ch := make(chan reply, 1)
	l.mu.Lock()
	if l.gone != nil {
		l.mu.Unlock()
		return nil, fmt.Errorf("%w: %w", ErrGone, l.gone)
	}
	l.pending[id] = ch
	l.mu.Unlock()

	start := time.Now()
	rawID := appendCallID(make([]byte, 0, 24), id)
	l.wmu.Lock()
	err := l.s.WriteRequest(rawID, protocol.MethodExecute, protocol.ExecuteParams{ToolName: tool, ToolInput: input})
	l.wmu.Unlock()
	if err != nil {
		l.forget(id)
		if l.isGone() {
			err = fmt.Errorf("%w: %w", ErrGone, err)
		}
		err = fmt.Errorf("hub: calling %s on %s: %w", tool, r.mac, err)
		h.callDone(r, l, tool, input, nil, start, err)
		return nil, err
	}

	var rep reply
	select {
	case rep = <-ch:
	case <-ctx.Done():
		l.forget(id)
		err := fmt.Errorf("hub: calling %s on %s: %w", tool, r.mac, context.Cause(ctx))
		h.callDone(r, l, tool, input, nil, start, err)
		return nil, err
	}
	if rep.err != nil {
		err := fmt.Errorf("hub: calling %s on %s: %w", tool, r.mac, rep.err)
		h.callDone(r, l, tool, input, nil, start, err)
		return nil, err
	}
	resp := newResponse(rep.m, r.mac, tool)
	if resp.Err != nil {
		h.callDone(r, l, tool, input, nil, start, resp.Err)
	} else {
		h.callDone(r, l, tool, input, resp.Result, start, nil)
	}
	return resp, nil
}

// callDone publishes a call on a line of this node: to this hub's subscribers, and in a cluster
// to the other nodes', whoever made the call.
func (h *Hub) callDone(r *registration, l *line, tool string, input, result json.RawMessage, start time.Time, err error) {
	e := Event{Kind: CallDone, Device: Device{MAC: r.mac, Since: r.since, RemoteAddr: l.remote, ClientID: l.clientID, Node: r.node},
		Tool: tool, Input: input, Result: result, Duration: time.Since(start), Err: err}
	h.emit(e)
	if h.opts.Cluster != nil {
		h.opts.Cluster.Publish(e)
	}
}

// lineOf returns the line serving mac, and its registration; the line is nil for a device
// another node holds.
func (h *Hub) lineOf(mac string) (*line, *registration, error) {
	m := normalMAC(mac)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, nil, ErrClosed
	}
	r := h.devices[m]
	if r == nil {
		return nil, nil, fmt.Errorf("%w: %s", ErrNotRegistered, mac)
	}
	return r.line, r, nil
}

func (l *line) forget(id uint64) {
	l.mu.Lock()
	delete(l.pending, id)
	l.mu.Unlock()
}

func (l *line) isGone() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.gone != nil
}

// Send sends an mcp/ai/message notification (type chunk, final, thought, ...) to the device
// registered as mac, on this node or, in a cluster, another. Messages sent one after another
// arrive in that order.
func (h *Hub) Send(mac, typ, content string) error {
	l, r, err := h.lineOf(mac)
	if err != nil {
		return err
	}
	if l == nil {
		ctx, cancel := context.WithTimeout(context.Background(), remoteTimeout)
		defer cancel()
		if err := h.opts.Cluster.Send(ctx, r.node, r.mac, typ, content); err != nil {
			return fmt.Errorf("hub: sending %s to %s (node %s): %w", typ, r.mac, r.node, err)
		}
		return nil
	}
	return h.sendLine(l, r, typ, content)
}

// sendLine is Send on a line of this node.
func (h *Hub) sendLine(l *line, r *registration, typ, content string) error {
	l.wmu.Lock()
	err := l.s.WriteNotification(protocol.MethodAIMessage, protocol.AIMessage{Type: typ, Content: content})
	l.wmu.Unlock()
	if err != nil {
		if l.isGone() {
			err = fmt.Errorf("%w: %w", ErrGone, err)
		}
		return fmt.Errorf("hub: sending %s to %s: %w", typ, r.mac, err)
	}
	return nil
}

// Validate checks input against the schema of the tool the device registered as mac declared,
// with the tools package: a *tools.ParamsError says what is wrong (an unknown tool, an absent
// input, a value out of range). It returns the tool's declaration.
func (h *Hub) Validate(mac, tool string, input json.RawMessage) (tools.Declaration, error) {
	m := normalMAC(mac)
	h.mu.Lock()
	r := h.devices[m]
	var ts *toolset
	if r != nil {
		ts = r.tools
	}
	h.mu.Unlock()
	if ts == nil {
		return tools.Declaration{}, fmt.Errorf("%w: %s", ErrNotRegistered, mac)
	}
	t, err := ts.reg.Validate(tool, input)
	if err != nil {
		return tools.Declaration{}, err
	}
	return t.Declaration, nil
}

// Tool returns the declaration of a tool the device registered as mac declared.
func (h *Hub) Tool(mac, tool string) (tools.Declaration, bool) {
	m := normalMAC(mac)
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.devices[m]
	if r == nil {
		return tools.Declaration{}, false
	}
	t, ok := r.tools.reg.Lookup(tool)
	if !ok {
		return tools.Declaration{}, false
	}
	return t.Declaration, true
}

// callIDPrefix starts every call id the hub sends: "tc-<n>", unique for the hub's life.
const callIDPrefix = `"tc-`

func appendCallID(b []byte, id uint64) []byte {
	b = append(b, callIDPrefix...)
	b = strconv.AppendUint(b, id, 10)
	return append(b, '"')
}

func parseCallID(raw []byte) (uint64, bool) {
	if !bytes.HasPrefix(raw, []byte(callIDPrefix)) || len(raw) < len(callIDPrefix)+2 || raw[len(raw)-1] != '"' {
		return 0, false
	}
	digits := raw[len(callIDPrefix) : len(raw)-1]
	var n uint64
	for _, c := range digits {
		if c < '0' || c > '9' || n > (1<<64-1)/10-1 {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}

// newResponse builds the Response of an answer.
func newResponse(m *transport.Message, mac, tool string) *Response {
	var raw bytes.Buffer
	raw.WriteString(`{"jsonrpc":"2.0","id":`)
	raw.Write(m.ID)
	if m.Error == nil {
		raw.WriteString(`,"result":`)
		raw.Write(m.Result)
		raw.WriteByte('}')
		return &Response{Raw: raw.Bytes(), Result: m.Result}
	}
	e := &CallError{MAC: mac, Tool: tool, Code: m.Error.Code, Message: m.Error.Message}
	if m.Error.Data != nil {
		e.Data = *m.Error.Data
		var d protocol.ErrorData
		if json.Unmarshal(e.Data, &d) == nil {
			e.Details = d.Details
		}
	}
	raw.WriteString(`,"error":`)
	obj, _ := json.Marshal(struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data,omitempty"`
	}{e.Code, e.Message, e.Data})
	raw.Write(obj)
	raw.WriteByte('}')
	return &Response{Raw: raw.Bytes(), Err: e}
}
