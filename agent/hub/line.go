package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/transport"
)

// line is one device's WebSocket. Its read loop (serve) is the only reader; writers are Call,
// Send and the registration answers.
type line struct {
	h        *Hub
	s        *transport.Stream
	remote   string
	clientID string
	tokenOK  bool // the handshake carried a valid device token (Options.Tokens)

	// wmu orders writes that must not be overtaken: a registration's answer goes out before any
	// call to the device it registered (a device serves calls only once registered).
	wmu sync.Mutex

	mu      sync.Mutex
	pending map[uint64]chan reply // calls awaiting an answer, by id
	gone    error                 // why the line is unusable; set once

	reg        *registration // guarded by Hub.mu: the MAC this line serves, nil before registering
	registered chan struct{} // closed at the line's first registration

	// What a person says (user.go). ctx ends with the read loop.
	ctx    context.Context
	cancel context.CancelFunc

	umu        sync.Mutex
	userq      []userJob               // requests waiting for the line's worker, in order
	waiting    int                     // requests taken and not yet done, the running one included
	working    bool                    // a worker runs; it returns when userq is empty
	cancelTurn context.CancelCauseFunc // the running turn's, nil when none runs
}

// awaitRegistration closes the line if it has not registered within d.
func (l *line) awaitRegistration(d time.Duration) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-l.registered:
	case <-l.s.Done():
	case <-timer.C:
		l.h.log.Warn("closing a line that did not register in time", "remote", l.remote, "timeout", d)
		l.s.Close()
	}
}

// reply is what a pending call receives: the answer, or why none will come.
type reply struct {
	m   *transport.Message
	err error
}

func (l *line) serve() {
	for {
		m, err := l.s.Read()
		if err != nil {
			break
		}
		switch m.Kind {
		case transport.KindResponse:
			l.deliver(m)
		case transport.KindRequest:
			if m.Method == protocol.MethodRegisterTools {
				l.register(m)
				continue
			}
			if l.user(m) {
				continue
			}
			l.writeError(m.ID, protocol.CodeMethodNotFound, "Method not found", fmt.Sprintf("the server has no method %q", m.Method))
		case transport.KindNotification:
			if l.user(m) {
				continue
			}
			l.h.log.Debug("notification ignored", "remote", l.remote, "method", m.Method)
		}
	}
	l.cancel() // the turn and transcription running end; the worker runs nothing more
	l.end(l.s.Err())
}

func (l *line) writeError(id json.RawMessage, code int64, message, details string) {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if err := l.s.WriteError(id, code, message, protocol.ErrorData{Details: details}); err != nil {
		l.h.log.Debug("writing an error answer", "remote", l.remote, "err", err)
	}
}

// deliver hands an answer to the call waiting for it. An answer nobody waits for (the caller gave
// up, or an id this hub never sent) is logged and dropped.
func (l *line) deliver(m *transport.Message) {
	id, ok := parseCallID(m.ID)
	var ch chan reply
	if ok {
		l.mu.Lock()
		ch = l.pending[id]
		delete(l.pending, id)
		l.mu.Unlock()
	}
	if ch == nil {
		l.h.log.Debug("answer to no pending call", "remote", l.remote, "id", string(m.ID))
		return
	}
	ch <- reply{m: m} // buffered: never blocks
}

// fail makes the line unusable for calls and fails those pending with ErrGone wrapping why.
func (l *line) fail(why error) {
	l.mu.Lock()
	if l.gone == nil {
		l.gone = why
	}
	pending := l.pending
	l.pending = nil
	l.mu.Unlock()
	for _, ch := range pending {
		ch <- reply{err: fmt.Errorf("%w: %w", ErrGone, why)}
	}
}

// end runs when the read loop has ended: the line is gone.
func (l *line) end(why error) {
	if why == nil {
		why = errors.New("the line closed")
	}
	l.fail(why)
	h := l.h
	h.mu.Lock()
	delete(h.lines, l)
	r := l.reg
	var snap Device
	current := r != nil && h.devices[r.mac] == r
	if current {
		snap = r.snapshot()
		h.drop(r)
	}
	h.mu.Unlock()
	if current {
		if h.opts.Cluster != nil {
			h.opts.Cluster.Release(r.mac, r.since)
		}
		h.log.Info("device disconnected", "mac", r.mac, "remote", l.remote, "reason", why)
		h.emit(Event{Kind: Disconnected, Device: snap, Reason: why})
	} else {
		h.log.Debug("line closed", "remote", l.remote, "reason", why)
	}
}

// register answers one mcp/registerTools; see the package documentation for the rules. The
// cheap checks come first (size, count, binding), the schemas are compiled last.
func (l *line) register(m *transport.Message) {
	h := l.h
	if details := h.checkParamsSize(len(m.Params)); details != "" {
		l.refuse(m.ID, "", details)
		return
	}
	var p protocol.RegisterParams[json.RawMessage]
	if len(m.Params) == 0 || m.Params[0] != '{' {
		l.refuse(m.ID, "", "params must be an object with mac_addr and tools")
		return
	}
	if err := json.Unmarshal(m.Params, &p); err != nil {
		l.refuse(m.ID, "", "params: "+err.Error())
		return
	}
	mac, err := protocol.ParseMAC(p.MAC)
	if err != nil {
		l.refuse(m.ID, p.MAC, "mac_addr "+err.Error())
		return
	}
	if details := h.checkTools(p.Tools); details != "" {
		l.refuse(m.ID, mac, details)
		return
	}
	// A MAC bound to another client is refused before the schemas are compiled, so a squatter
	// costs a lookup; the decision that counts is taken again below, with the tools in hand.
	ctx, cancel := context.WithTimeout(context.Background(), bindingTimeout)
	h.bmu.Lock()
	_, _, err = l.checkBinding(ctx, mac)
	h.bmu.Unlock()
	cancel()
	if err != nil {
		l.refuseBinding(m.ID, mac, err)
		return
	}
	ts, err := h.acquireToolset(p.Tools)
	if err != nil {
		l.refuse(m.ID, mac, err.Error())
		return
	}
	since := time.Now()
	// claimed: this line holds mac in the cluster, or is to once decided; "held" when it did
	// before this registration (its tools change), so a refusal now must not release it.
	claimed, held := false, false
	if h.opts.Cluster != nil {
		var refusal string
		since, refusal, err = l.claim(mac, ts)
		if refusal != "" || err != nil {
			h.mu.Lock()
			h.releaseToolset(ts)
			h.mu.Unlock()
			if err != nil {
				h.log.Error("registration refused: the cluster could not decide who holds the MAC", "mac", mac, "remote", l.remote, "err", err)
				l.writeError(m.ID, protocol.CodeInternalError, "Internal error", "the server could not check with the other nodes of its cluster which one holds "+mac+"; it logged why. Try again")
				return
			}
			l.refuse(m.ID, mac, refusal)
			return
		}
		claimed = true
		h.mu.Lock()
		held = l.reg != nil && h.devices[mac] == l.reg
		h.mu.Unlock()
	}
	// unclaim undoes a claim that the registration did not keep; called with Hub.mu held.
	unclaim := func() {
		if !claimed {
			return
		}
		delete(h.claiming, mac)
		if !held {
			h.wg.Go(func() { h.opts.Cluster.Release(mac, since) })
		}
	}

	ctx, cancel = context.WithTimeout(context.Background(), bindingTimeout) // compiling took a while
	defer cancel()
	h.bmu.Lock()
	bind, owner, err := l.checkBinding(ctx, mac)
	if err != nil {
		h.bmu.Unlock()
		h.mu.Lock()
		h.releaseToolset(ts)
		unclaim()
		h.mu.Unlock()
		l.refuseBinding(m.ID, mac, err)
		return
	}

	l.wmu.Lock()
	h.mu.Lock()
	var (
		events   []Event
		replace  *line
		conflict string
		msg      = "Tools were successfully registered."
	)
	cur := h.devices[mac]
	if claimed {
		delete(h.claiming, mac)
	}
	switch {
	case h.closed:
		conflict = "the server is shutting down"
	case l.reg != nil && l.reg.mac != mac && h.devices[l.reg.mac] == l.reg:
		conflict = fmt.Sprintf("this line is registered as %s; a line serves one MAC", l.reg.mac)
	case cur != nil && cur.line == l:
		if cur.tools == ts {
			h.releaseToolset(ts)
			msg = "Tools were successfully registered (unchanged)."
			break
		}
		h.releaseToolset(cur.tools)
		cur.tools = ts
		events = append(events, Event{Kind: ToolsChanged, Device: cur.snapshot()})
		msg = "Tools were successfully updated."
	case cur != nil && cur.line != nil && (l.clientID == "" || l.clientID != cur.clientID):
		conflict = liveConflict(mac, cur)
	default:
		switch {
		case cur != nil && cur.line == nil: // another node's, until this node's claim just now
			events = append(events, Event{Kind: Disconnected, Device: cur.snapshot(), Reason: ErrMoved})
			h.drop(cur)
		case cur != nil: // the same device on a new line: the old one is dead and unnoticed
			replace = cur.line
			events = append(events, Event{Kind: Disconnected, Device: cur.snapshot(), Reason: ErrReplaced})
			h.drop(cur)
		}
		r := &registration{mac: mac, line: l, node: h.nodeName(), remote: l.remote, clientID: l.clientID, since: since, tools: ts, done: make(chan struct{})}
		h.devices[mac] = r
		if l.reg == nil {
			close(l.registered)
		}
		l.reg = r
		events = append(events, Event{Kind: Registered, Device: r.snapshot()})
	}
	if conflict != "" {
		h.releaseToolset(ts)
		unclaim()
	}
	h.mu.Unlock()
	if conflict == "" && bind {
		// Still under bmu: no other registration decides on a binding until this one is kept.
		// A binding that cannot be written leaves the device registered and unbound, and is
		// written at its next registration.
		if err := h.opts.Bindings.Bind(ctx, mac, l.clientID); err != nil {
			h.log.Error("the device's binding could not be saved", "mac", mac, "client_id", l.clientID, "err", err)
		} else if owner != "" {
			h.log.Warn("MAC bound to a new Client-Id by a device with a valid device token", "mac", mac, "remote", l.remote, "client_id", l.clientID, "old_client_id", owner)
		} else {
			h.log.Info("MAC bound to its device's Client-Id", "mac", mac, "client_id", l.clientID)
		}
	}
	h.bmu.Unlock()

	var werr error
	if conflict == "" {
		werr = l.s.WriteResult(m.ID, protocol.RegisterResult{Status: protocol.StatusRegistered, Message: msg, Features: h.features()})
	}
	l.wmu.Unlock()

	if conflict != "" {
		h.log.Warn("registration refused", "mac", mac, "remote", l.remote, "client_id", l.clientID, "reason", conflict)
		l.writeError(m.ID, protocol.CodeInvalidParams, "Invalid params", conflict)
		h.emit(Event{Kind: Refused, Device: Device{MAC: mac, RemoteAddr: l.remote, ClientID: l.clientID}, Reason: errors.New(conflict)})
		return
	}
	if werr != nil {
		h.log.Debug("answering a registration", "mac", mac, "err", werr)
	}
	if replace != nil {
		h.log.Warn("device registered on a new line with the same Client-Id: closing its old line",
			"mac", mac, "old_remote", replace.remote, "new_remote", l.remote, "client_id", l.clientID)
		replace.fail(ErrReplaced)
		h.closeLine(replace)
	}
	for _, e := range events {
		if e.Kind == Registered {
			h.log.Info("device registered", "mac", mac, "remote", l.remote, "tools", len(e.Device.Tools))
		}
		h.emit(e)
	}
}

// liveConflict is the refusal of a registration for a MAC another live line serves; called with
// Hub.mu held.
func liveConflict(mac string, cur *registration) string {
	return fmt.Sprintf("MAC %s is already registered by a live connection from %s since %s; only the same device (same Client-Id) may replace it",
		mac, cur.remote, cur.since.UTC().Format(time.RFC3339))
}

// refuseBinding answers a registration checkBinding refused or could not decide. A MAC that a
// live line serves is refused as such, as it would be without bindings.
func (l *line) refuseBinding(id json.RawMessage, mac string, err error) {
	h := l.h
	var be *bindingError
	if !errors.As(err, &be) {
		h.log.Error("registration refused: the device bindings cannot be read", "mac", mac, "remote", l.remote, "err", err)
		l.writeError(id, protocol.CodeInternalError, "Internal error", "the server could not check which client "+mac+" is bound to; it logged why")
		return
	}
	details := be.details
	h.mu.Lock()
	if cur := h.devices[mac]; cur != nil && cur.line != nil && cur.line != l {
		details = liveConflict(mac, cur)
	}
	h.mu.Unlock()
	l.refuse(id, mac, details)
}

// bindingTimeout bounds the reads and writes of a registration's binding.
const bindingTimeout = 5 * time.Second

// bindingError is a registration the binding of its MAC refuses; details go to the device.
type bindingError struct{ details string }

func (e *bindingError) Error() string { return e.details }

// checkBinding decides, with Hub.bmu held, whether this line may register mac given the Client-Id
// mac is bound to. It returns whether to bind mac to the line's Client-Id once registered, and
// the Client-Id it was bound to ("" for none); or a *bindingError for a refusal, or the store's
// error. The bound Client-Id is never told to the line: it is what a squatter would need.
func (l *line) checkBinding(ctx context.Context, mac string) (bind bool, owner string, err error) {
	owner, err = l.h.opts.Bindings.Bound(ctx, mac)
	switch {
	case err != nil:
		return false, "", err
	case owner == l.clientID:
		return false, owner, nil
	case owner == "" || l.tokenOK:
		// Free, or taken over by a device holding a valid device token: the token is the
		// authority. A line without a Client-Id registers without binding.
		return l.clientID != "", owner, nil
	}
	sent := "this connection sent no Client-Id header"
	if l.clientID != "" {
		sent = fmt.Sprintf("this connection's Client-Id is %q", l.clientID)
	}
	return false, owner, &bindingError{fmt.Sprintf("MAC %s is bound to another client: a device with a different Client-Id registered it first (%s). "+
		"If this device replaces it, the server's operator frees the MAC with `forget %s` at the serve console or POST %s%s/forget "+
		"(with agent.token_file's bearer token), or sets agent.device_tokens_file and gives this device one of its tokens",
		mac, sent, mac, DevicesPath, mac)}
}

// closeLine closes a replaced line without holding up the caller: a dead peer never answers the
// close frame, and the transport waits a while for it.
func (h *Hub) closeLine(l *line) {
	h.mu.Lock()
	if h.closed { // Close is closing every line already
		h.mu.Unlock()
		return
	}
	h.wg.Add(1)
	h.mu.Unlock()
	go func() {
		defer h.wg.Done()
		l.s.Close()
	}()
}

// refuse answers a malformed registration with -32602 and data.details.
func (l *line) refuse(id json.RawMessage, mac, details string) {
	l.h.log.Warn("registration refused", "mac", mac, "remote", l.remote, "client_id", l.clientID, "reason", details)
	l.writeError(id, protocol.CodeInvalidParams, "Invalid params", details)
	l.h.emit(Event{Kind: Refused, Device: Device{MAC: mac, RemoteAddr: l.remote, ClientID: l.clientID}, Reason: errors.New(details)})
}
