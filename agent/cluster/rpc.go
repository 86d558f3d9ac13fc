package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/devicectl/devicectl/agent/hub"
	"github.com/devicectl/devicectl/protocol"
)

// callRequest runs a tool on a device of the node it is sent to (NAME.node.NODE.call).
type callRequest struct {
	MAC     string          `json:"mac"`
	Tool    string          `json:"tool"`
	Input   json.RawMessage `json:"input"`
	Timeout time.Duration   `json:"timeout"` // what was left of the caller's deadline
}

// The kinds of answer to a call or a message.
const (
	answerResult  = "result"  // the device's success (Result), or for a message: sent
	answerError   = "error"   // the device's JSON-RPC error (Code, Message, Data, Details)
	answerGone    = "gone"    // the device is not on that node's line any more (Why)
	answerTimeout = "timeout" // the caller's deadline passed on that node
	answerFailed  = "failed"  // anything else (Why)
)

// answer is a node's reply to a call or a message for one of its devices.
type answer struct {
	Kind    string          `json:"kind"`
	Raw     json.RawMessage `json:"raw,omitempty"` // the device's answer frame as received
	Result  json.RawMessage `json:"result,omitempty"`
	Code    int64           `json:"code,omitempty"`
	Message string          `json:"message,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`
	Details string          `json:"details,omitempty"`
	Why     string          `json:"why,omitempty"`
}

// sendRequest is an mcp/ai/message for a device of the node it is sent to (NAME.node.NODE.send).
type sendRequest struct {
	MAC     string `json:"mac"`
	Type    string `json:"type"`
	Content string `json:"content"`
}

// errNoNATS is what needs NATS while the connection is down: failed at once, not at a timeout.
var errNoNATS = errors.New("cluster: NATS is unreachable (reconnecting)")

// maxRemoteWait bounds a call from another node whose caller set no deadline.
const maxRemoteWait = 5 * time.Minute

// Call implements hub.Cluster.
func (c *Cluster) Call(ctx context.Context, node, mac, tool string, input json.RawMessage) (*hub.Response, error) {
	req := callRequest{MAC: mac, Tool: tool, Input: input, Timeout: maxRemoteWait}
	if d, ok := ctx.Deadline(); ok {
		req.Timeout = time.Until(d)
	}
	a, err := c.request(ctx, node, "call", req)
	if err != nil {
		return nil, err
	}
	switch a.Kind {
	case answerResult:
		return &hub.Response{Raw: a.Raw, Result: a.Result}, nil
	case answerError:
		return &hub.Response{Raw: a.Raw, Err: &hub.CallError{MAC: mac, Tool: tool, Code: a.Code, Message: a.Message, Data: a.Data, Details: a.Details}}, nil
	}
	return nil, a.err(node)
}

// Send implements hub.Cluster.
func (c *Cluster) Send(ctx context.Context, node, mac, typ, content string) error {
	a, err := c.request(ctx, node, "send", sendRequest{MAC: mac, Type: typ, Content: content})
	if err != nil {
		return err
	}
	if a.Kind == answerResult {
		return nil
	}
	return a.err(node)
}

// err is the error an answer that is neither a result nor the device's error stands for.
func (a *answer) err(node string) error {
	switch a.Kind {
	case answerGone:
		return fmt.Errorf("%w: on node %s: %s", hub.ErrGone, node, a.Why)
	case answerTimeout:
		return fmt.Errorf("node %s: %w", node, context.DeadlineExceeded)
	}
	return fmt.Errorf("node %s: %s", node, a.Why)
}

// request sends req to node's subject and reads its answer. A node with nobody answering on
// its subject is gone: its devices too.
func (c *Cluster) request(ctx context.Context, node, what string, req any) (*answer, error) {
	if !c.nc.IsConnected() {
		return nil, errNoNATS
	}
	data, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	m, err := c.nc.RequestWithContext(ctx, c.prefix+"node."+node+"."+what, data)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return nil, fmt.Errorf("%w: node %s is gone", hub.ErrGone, node)
	case ctx.Err() != nil:
		return nil, context.Cause(ctx)
	case err != nil:
		return nil, fmt.Errorf("cluster: reaching node %s: %w", node, err)
	}
	var a answer
	if err := json.Unmarshal(m.Data, &a); err != nil {
		return nil, fmt.Errorf("cluster: node %s answered %q: %w", node, m.Data, err)
	}
	return &a, nil
}

// handleCall runs another node's call on a device of this node, in a goroutine of its own: it
// waits for the device.
func (c *Cluster) handleCall(m *nats.Msg) {
	select {
	case c.calls <- struct{}{}:
	default:
		respond(c, m, &answer{Kind: answerError, Code: protocol.CodeBusy, Message: "Busy",
			Details: fmt.Sprintf("node %s is running %d calls for other nodes, the most it may", c.o.Node, MaxRemoteCalls)})
		return
	}
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		<-c.calls
		respond(c, m, &answer{Kind: answerGone, Why: "the node is shutting down"})
		return
	}
	c.wg.Go(func() {
		defer func() { <-c.calls }()
		respond(c, m, c.runCall(m.Data))
	})
	c.mu.Unlock()
}

func (c *Cluster) runCall(data []byte) *answer {
	var req callRequest
	if err := json.Unmarshal(data, &req); err != nil {
		return &answer{Kind: answerFailed, Why: "a malformed call: " + err.Error()}
	}
	ctx, cancel := context.WithTimeout(c.ctx, req.Timeout)
	defer cancel()
	resp, err := c.hub.Call(ctx, req.MAC, req.Tool, req.Input)
	switch {
	case err == nil && resp.Err != nil:
		e := resp.Err
		return &answer{Kind: answerError, Raw: resp.Raw, Code: e.Code, Message: e.Message, Data: e.Data, Details: e.Details}
	case err == nil:
		return &answer{Kind: answerResult, Raw: resp.Raw, Result: resp.Result}
	}
	return failure(ctx, err)
}

// failure is the answer for a call or a message that did not reach the device.
func failure(ctx context.Context, err error) *answer {
	switch {
	case errors.Is(err, hub.ErrGone), errors.Is(err, hub.ErrNotRegistered), errors.Is(err, hub.ErrClosed):
		return &answer{Kind: answerGone, Why: err.Error()}
	case ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded):
		return &answer{Kind: answerTimeout}
	}
	return &answer{Kind: answerFailed, Why: err.Error()}
}

func respond(c *Cluster, m *nats.Msg, a *answer) {
	data, err := json.Marshal(a)
	if err != nil {
		data, _ = json.Marshal(&answer{Kind: answerFailed, Why: err.Error()})
	}
	if err := m.Respond(data); err != nil {
		c.log.Debug("answering another node", "subject", m.Subject, "err", err)
	}
}

// sendJob is a message waiting for its device's writer.
type sendJob struct {
	m   *nats.Msg
	req sendRequest
}

// maxQueuedSends bounds the messages waiting for one device; past it they are refused.
const maxQueuedSends = 256

// handleSend queues a message for its device. Each device with messages waiting has one writer,
// which writes them in the order they came: a device slow to read holds up only its own.
func (c *Cluster) handleSend(m *nats.Msg) {
	var j sendJob
	if err := json.Unmarshal(m.Data, &j.req); err != nil {
		respond(c, m, &answer{Kind: answerFailed, Why: "a malformed message: " + err.Error()})
		return
	}
	j.m = m
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		respond(c, m, &answer{Kind: answerGone, Why: "the node is shutting down"})
		return
	}
	if q, writing := c.sendq[j.req.MAC]; writing {
		if len(q) >= maxQueuedSends {
			respond(c, m, &answer{Kind: answerFailed, Why: fmt.Sprintf("%d messages are waiting for %s, the most that may", maxQueuedSends, j.req.MAC)})
			return
		}
		c.sendq[j.req.MAC] = append(q, j)
		return
	}
	c.sendq[j.req.MAC] = nil
	c.wg.Go(func() { c.writeSends(j) })
}

// writeSends writes j, then the messages queued behind it, until none is left.
func (c *Cluster) writeSends(j sendJob) {
	mac := j.req.MAC
	for {
		a := &answer{Kind: answerResult}
		if err := c.hub.Send(mac, j.req.Type, j.req.Content); err != nil {
			a = failure(context.Background(), err)
		}
		respond(c, j.m, a)
		c.mu.Lock()
		q := c.sendq[mac]
		if len(q) == 0 {
			delete(c.sendq, mac)
			c.mu.Unlock()
			return
		}
		j, c.sendq[mac] = q[0], q[1:]
		c.mu.Unlock()
	}
}

// event is a hub event of this node's lines, for the others' subscribers (NAME.events.NODE).
type event struct {
	Kind     string          `json:"kind"` // call_done, heard
	Node     string          `json:"node"`
	MAC      string          `json:"mac"`
	Since    time.Time       `json:"since"`
	Remote   string          `json:"remote"`
	Tool     string          `json:"tool,omitempty"`
	Input    json.RawMessage `json:"input,omitempty"`
	Result   json.RawMessage `json:"result,omitempty"`
	Duration time.Duration   `json:"duration,omitempty"`
	Err      string          `json:"err,omitempty"`
	Gone     bool            `json:"gone,omitempty"` // Err wraps hub.ErrGone
	Call     *answer         `json:"call,omitempty"` // Err is the device's error answer
	Text     string          `json:"text,omitempty"`
	Source   string          `json:"source,omitempty"`
	TurnID   string          `json:"turn_id,omitempty"`
}

// Publish implements hub.Cluster.
func (c *Cluster) Publish(e hub.Event) {
	ev := event{Kind: e.Kind.String(), Node: c.o.Node, MAC: e.Device.MAC, Since: e.Device.Since, Remote: e.Device.RemoteAddr,
		Tool: e.Tool, Input: e.Input, Result: e.Result, Duration: e.Duration, Text: e.Text, Source: e.Source, TurnID: e.TurnID}
	if e.Err != nil {
		ev.Err = e.Err.Error()
		ev.Gone = errors.Is(e.Err, hub.ErrGone)
		if ce := (*hub.CallError)(nil); errors.As(e.Err, &ce) {
			ev.Call = &answer{Kind: answerError, Code: ce.Code, Message: ce.Message, Data: ce.Data, Details: ce.Details}
		}
	}
	data, err := json.Marshal(ev)
	if err != nil {
		return
	}
	if err := c.nc.Publish(c.prefix+"events."+c.o.Node, data); err != nil {
		c.log.Debug("publishing an event", "kind", ev.Kind, "err", err)
	}
}

// handleEvent hands another node's event to the hub.
func (c *Cluster) handleEvent(m *nats.Msg) {
	var ev event
	if err := json.Unmarshal(m.Data, &ev); err != nil || ev.Node == c.o.Node {
		return
	}
	e := hub.Event{Device: hub.Device{MAC: ev.MAC, Since: ev.Since, RemoteAddr: ev.Remote, Node: ev.Node},
		Tool: ev.Tool, Input: ev.Input, Result: ev.Result, Duration: ev.Duration, Text: ev.Text, Source: ev.Source, TurnID: ev.TurnID}
	switch ev.Kind {
	case hub.CallDone.String():
		e.Kind = hub.CallDone
	case hub.Heard.String():
		e.Kind = hub.Heard
	default:
		return
	}
	switch {
	case ev.Call != nil:
		e.Err = &hub.CallError{MAC: ev.MAC, Tool: ev.Tool, Code: ev.Call.Code, Message: ev.Call.Message, Data: ev.Call.Data, Details: ev.Call.Details}
	case ev.Gone:
		e.Err = fmt.Errorf("%w: %s", hub.ErrGone, ev.Err)
	case ev.Err != "":
		e.Err = errors.New(ev.Err)
	}
	c.hub.Relay(e)
}
