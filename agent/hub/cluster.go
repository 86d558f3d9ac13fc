package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Cluster connects a hub to the other serve nodes it shares its devices with (package
// agent/cluster is the one over NATS). A hub without one (Options.Cluster nil) is the only node:
// none of this file runs. See the package documentation, "A cluster of nodes".
type Cluster interface {
	// Attach is called once, by New, with how the cluster reaches this hub.
	Attach(n Node)
	// Node is this node's name: Device.Node of the devices on its own lines.
	Node() string
	// Claim makes this node the holder of c.MAC in the whole cluster, for a registration on one
	// of its lines. A node that holds the MAC now is asked to yield (Node.Yield): the rules a
	// single hub applies to a second registration are applied across nodes. A refusal is a
	// *ClaimError whose Details go to the device; any other error means the cluster could not
	// decide (NATS is unreachable, the holder does not answer).
	Claim(ctx context.Context, c Claim) error
	// Release ends the hold Claim took for mac with since, once its registration ends; a hold
	// taken since by a newer registration is kept.
	Release(mac string, since time.Time)
	// Call runs a tool on the device mac that node holds, within ctx's deadline, and returns
	// the device's answer. A device or node that is gone is an error wrapping ErrGone.
	Call(ctx context.Context, node, mac, tool string, input json.RawMessage) (*Response, error)
	// Send sends an mcp/ai/message to the device mac that node holds; messages sent one after
	// another arrive in that order.
	Send(ctx context.Context, node, mac, typ, content string) error
	// Publish tells the other nodes what happened on a line of this node (CallDone, Heard), for
	// their subscribers.
	Publish(e Event)
}

// Node is what a Cluster asks of its hub. Its methods are safe for concurrent use.
type Node interface {
	// Yield answers another node's Claim for c.MAC by this hub's rules: nil when this node has
	// no live line for it, or had one of the same device (same non-empty Client-Id), which it
	// closes; a *ClaimError when a live line of another client serves it, or one is registering.
	Yield(c Claim) error
	// Call and Send reach a device on one of this node's own lines, never another node's: a MAC
	// that is not on one is ErrNotRegistered.
	Call(ctx context.Context, mac, tool string, input json.RawMessage) (*Response, error)
	Send(mac, typ, content string) error
	// Lost closes the line of this node that serves mac: another node holds it now (why).
	Lost(mac string, why error)
	// Remote sets what the cluster knows of a device another node holds; d nil means no node
	// holds mac any more, and why says what ended it.
	Remote(mac string, d *RemoteDevice, why error)
	// Relay hands the hub an event another node published.
	Relay(e Event)
}

// Claim is a registration asking for its MAC across the cluster.
type Claim struct {
	MAC        string
	ClientID   string // the line's Client-Id header; "" when it sent none
	RemoteAddr string
	Since      time.Time       // when the registration began: Release names it by this
	Tools      json.RawMessage // params.tools, as the device sent them
	Node       string          // the node asking; set by the cluster for Yield
}

// RemoteDevice is a device that another node of the cluster holds.
type RemoteDevice struct {
	Node       string
	Since      time.Time
	RemoteAddr string
	Tools      json.RawMessage // params.tools, as the device sent them
}

// ClaimError is a claim refused by the rules; Details say why, for the device.
type ClaimError struct{ Details string }

func (e *ClaimError) Error() string { return e.Details }

// ErrMoved is why a registration ended because another node of the cluster holds its MAC now:
// the device registered there.
var ErrMoved = errors.New("hub: the device registered on another node of the cluster")

// claimTimeout bounds a registration's claim across the cluster.
const claimTimeout = 5 * time.Second

// remoteTimeout bounds a message sent to a device on another node.
const remoteTimeout = 10 * time.Second

// claim makes this node the cluster's holder of mac for l, before the registration is decided.
// It reserves mac on this node for the time of the claim, so that no other line of this node
// claims it meanwhile and another node asking is refused (Yield). It returns the refusal's
// details, or an error when the cluster could not decide. since is the registration's, kept
// when l serves mac already (its tools change).
func (l *line) claim(mac string, ts *toolset) (since time.Time, refusal string, err error) {
	h := l.h
	since = time.Now()
	h.mu.Lock()
	cur := h.devices[mac]
	switch {
	case h.closed:
		refusal = "the server is shutting down"
	case l.reg != nil && l.reg.mac != mac && h.devices[l.reg.mac] == l.reg:
		refusal = fmt.Sprintf("this line is registered as %s; a line serves one MAC", l.reg.mac)
	case cur != nil && cur.line == l:
		since = cur.since
	case cur != nil && cur.line != nil && (l.clientID == "" || l.clientID != cur.clientID):
		refusal = liveConflict(mac, cur)
	case h.claiming[mac] != nil:
		o := h.claiming[mac]
		refusal = fmt.Sprintf("MAC %s is being registered by another connection from %s; only one may hold it", mac, o.remote)
	}
	if refusal == "" {
		h.claiming[mac] = l
	}
	h.mu.Unlock()
	if refusal != "" {
		return since, refusal, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), claimTimeout)
	defer cancel()
	err = h.opts.Cluster.Claim(ctx, Claim{MAC: mac, ClientID: l.clientID, RemoteAddr: l.remote, Since: since, Tools: json.RawMessage(ts.key)})
	if err == nil {
		return since, "", nil
	}
	h.mu.Lock()
	delete(h.claiming, mac)
	h.mu.Unlock()
	if ce := (*ClaimError)(nil); errors.As(err, &ce) {
		return since, ce.Details, nil
	}
	return since, "", err
}

// node is how the cluster reaches the hub (Node).
type node struct{ h *Hub }

var _ Node = node{}

func (n node) Yield(c Claim) error {
	h := n.h
	h.mu.Lock()
	if h.closed { // its lines are closing: nothing here holds the MAC
		h.mu.Unlock()
		return nil
	}
	if l := h.claiming[c.MAC]; l != nil {
		h.mu.Unlock()
		return &ClaimError{fmt.Sprintf("MAC %s is being registered by another connection from %s (node %s); only one may hold it", c.MAC, l.remote, h.nodeName())}
	}
	cur := h.devices[c.MAC]
	if cur == nil || cur.line == nil {
		h.mu.Unlock()
		return nil
	}
	if c.ClientID == "" || c.ClientID != cur.clientID {
		details := liveConflict(c.MAC, cur) + fmt.Sprintf(" (node %s)", h.nodeName())
		h.mu.Unlock()
		h.log.Warn("registration on another node refused: this node serves the MAC", "mac", c.MAC, "node", c.Node, "remote", c.RemoteAddr)
		return &ClaimError{details}
	}
	// The same device on another node: its line here died unnoticed.
	snap := cur.snapshot()
	h.drop(cur)
	h.mu.Unlock()
	h.log.Warn("device registered on another node with the same Client-Id: closing its line here",
		"mac", c.MAC, "node", c.Node, "old_remote", cur.remote, "new_remote", c.RemoteAddr)
	cur.line.fail(ErrReplaced)
	h.closeLine(cur.line)
	h.emit(Event{Kind: Disconnected, Device: snap, Reason: ErrReplaced})
	return nil
}

func (n node) Call(ctx context.Context, mac, tool string, input json.RawMessage) (*Response, error) {
	l, r, err := n.h.lineOf(mac)
	if err != nil {
		return nil, err
	}
	if l == nil {
		return nil, fmt.Errorf("%w: %s is on node %s", ErrNotRegistered, mac, r.node)
	}
	return n.h.callLine(ctx, l, r, tool, input)
}

func (n node) Send(mac, typ, content string) error {
	l, r, err := n.h.lineOf(mac)
	if err != nil {
		return err
	}
	if l == nil {
		return fmt.Errorf("%w: %s is on node %s", ErrNotRegistered, mac, r.node)
	}
	return n.h.sendLine(l, r, typ, content)
}

func (n node) Lost(mac string, why error) {
	h := n.h
	h.mu.Lock()
	cur := h.devices[mac]
	if cur == nil || cur.line == nil {
		h.mu.Unlock()
		return
	}
	snap := cur.snapshot()
	h.drop(cur)
	h.mu.Unlock()
	h.log.Warn("closing a device's line: another node holds its MAC now", "mac", mac, "remote", cur.remote, "reason", why)
	cur.line.fail(why)
	h.closeLine(cur.line)
	h.emit(Event{Kind: Disconnected, Device: snap, Reason: why})
}

func (n node) Remote(mac string, d *RemoteDevice, why error) {
	h := n.h
	h.mu.Lock()
	cur := h.devices[mac]
	switch {
	case h.closed, cur != nil && cur.line != nil, h.claiming[mac] != nil:
		// This node's own line holds it, or is claiming it: the cluster's news is older.
		h.mu.Unlock()
		return
	case d == nil:
		if cur == nil {
			h.mu.Unlock()
			return
		}
		snap := cur.snapshot()
		h.drop(cur)
		h.mu.Unlock()
		h.emit(Event{Kind: Disconnected, Device: snap, Reason: why})
		return
	case cur != nil && cur.sameRemote(d) && cur.tools != nil && cur.tools.key == string(d.Tools):
		h.mu.Unlock() // the holder refreshed its hold
		return
	}
	h.mu.Unlock()

	ts, err := h.acquireToolset(d.Tools)
	if err != nil {
		h.log.Warn("a device on another node declares tools this node refuses; they are left out", "mac", mac, "node", d.Node, "err", err)
	}
	h.mu.Lock()
	cur = h.devices[mac]
	if h.closed || (cur != nil && cur.line != nil) || h.claiming[mac] != nil {
		h.releaseToolset(ts)
		h.mu.Unlock()
		return
	}
	var events []Event
	if cur != nil && cur.sameRemote(d) {
		h.releaseToolset(cur.tools)
		cur.tools = ts
		events = append(events, Event{Kind: ToolsChanged, Device: cur.snapshot()})
	} else {
		if cur != nil {
			events = append(events, Event{Kind: Disconnected, Device: cur.snapshot(), Reason: ErrMoved})
			h.drop(cur)
		}
		r := &registration{mac: mac, node: d.Node, remote: d.RemoteAddr, since: d.Since, tools: ts, done: make(chan struct{})}
		h.devices[mac] = r
		events = append(events, Event{Kind: Registered, Device: r.snapshot()})
	}
	h.mu.Unlock()
	for _, e := range events {
		h.emit(e)
	}
}

func (n node) Relay(e Event) { n.h.emit(e) }

// sameRemote reports whether d is the registration r already shows (a refresh of its hold).
func (r *registration) sameRemote(d *RemoteDevice) bool {
	return r.line == nil && r.node == d.Node && r.since.Equal(d.Since) && r.remote == d.RemoteAddr
}

// drop ends registration r in the hub's table; called with Hub.mu held.
func (h *Hub) drop(r *registration) {
	delete(h.devices, r.mac)
	h.releaseToolset(r.tools)
	close(r.done)
}

// nodeName is this node's name in the cluster; "" without one.
func (h *Hub) nodeName() string {
	if h.opts.Cluster == nil {
		return ""
	}
	return h.node
}

// callRemote runs a tool on a device another node holds. A registration that ends meanwhile
// (the device moved, or its node's hold ended) ends the wait with ErrGone, as a line that drops
// ends a local call.
func (h *Hub) callRemote(ctx context.Context, r *registration, tool string, input json.RawMessage) (*Response, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	watch := make(chan struct{})
	go func() {
		defer close(watch)
		select {
		case <-r.done:
			cancel(errRegistrationEnded)
		case <-ctx.Done():
		}
	}()
	resp, err := h.opts.Cluster.Call(ctx, r.node, r.mac, tool, input)
	cancel(nil)
	<-watch
	if err != nil {
		if errors.Is(context.Cause(ctx), errRegistrationEnded) {
			err = fmt.Errorf("%w: %w", ErrGone, errRegistrationEnded)
		}
		return nil, fmt.Errorf("hub: calling %s on %s (node %s): %w", tool, r.mac, r.node, err)
	}
	return resp, nil
}

// errRegistrationEnded is why a call to a device on another node ended unanswered.
var errRegistrationEnded = errors.New("the device left its node, or moved to another, before it answered")
