//go:build !devicectl_omit_serve || !devicectl_omit_sim

package web

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/devicectl/devicectl/agent/hub"
	"github.com/devicectl/devicectl/protocol"
)

// keepTurns is how many exchanges of the conversation a page that connects late is shown.
const keepTurns = 50

// A page may fall behind by clientBuffer events or clientBytes bytes (whichever comes first, and
// at least a few of the largest events) before it is dropped; its EventSource then reconnects and
// starts again from a snapshot, so it loses nothing but time, and a page that stopped reading
// holds no more than that.
const (
	clientBuffer = 256
	clientBytes  = 1 << 20
)

// keepAlive is how often an idle event stream gets a comment, so that proxies keep it open.
const keepAlive = 20 * time.Second

// deviceView is a device as the page shows it.
type deviceView struct {
	MAC        string   `json:"mac"`
	Connected  bool     `json:"connected"`
	Reason     string   `json:"reason,omitempty"` // why it disconnected
	Addr       string   `json:"addr,omitempty"`
	Tools      []string `json:"tools"`
	Volume     *int     `json:"volume,omitempty"`
	Expression string   `json:"expression,omitempty"`
	// Uptime is the device's uptime in seconds as of now; the page counts on from it.
	Uptime *int64 `json:"uptime_s,omitempty"`

	uptimeAt time.Time // when Uptime was read
	uptime   int64     // what was read
	gone     uint64    // the order it disconnected in, if it is not connected
}

// maxGone is how many disconnected devices the page keeps showing: past it, the one gone longest
// is forgotten, so devices registering under ever new MACs cannot grow the state without end.
const maxGone = 64

// callView is one line of the tool log.
type callView struct {
	ID       int             `json:"id"`
	MAC      string          `json:"mac,omitempty"`
	Tool     string          `json:"tool"`
	Where    string          `json:"where"` // "device" or "server" (the agent's own tools)
	Input    json.RawMessage `json:"input,omitempty"`
	Result   json.RawMessage `json:"result,omitempty"`
	Err      string          `json:"error,omitempty"`
	Duration time.Duration   `json:"-"`
	Millis   float64         `json:"ms"`
}

// turnView is one exchange of the conversation.
type turnView struct {
	ID   int    `json:"id"`
	MAC  string `json:"mac,omitempty"`
	Text string `json:"text"` // what was said
	// Source is set for a turn a device started: "voice" when its microphone heard Text.
	Source  string `json:"source,omitempty"`
	Reply   string `json:"reply"` // the chunks so far, then the final
	Thought string `json:"thought,omitempty"`
	Err     string `json:"error,omitempty"`
	Done    bool   `json:"done"`
}

// state is what the pages show, and the pages to tell when it changes.
type state struct {
	showThoughts bool
	callBytes    int // what a call keeps of its input, its result and its error
	keepCalls    int // calls kept per device, and of the server's own tools
	queueBytes   int // what a page may fall behind by, in bytes
	reminders    bool
	remindEvery  time.Duration

	mu       sync.Mutex
	devices  map[string]*deviceView
	calls    map[string][]callView // by MAC; "" the server's own tools
	turns    []*turnView
	nextCall int
	nextTurn int
	goneSeq  uint64
	clients  map[*client]struct{}
}

type client struct {
	ch     chan []byte
	queued int             // bytes in ch; guarded by state.mu
	ctx    context.Context // done when the page is dropped: it fell too far behind, or left
	kick   context.CancelFunc
}

// newState keeps at most keepCalls calls per device, each cut to callBytes.
func newState(showThoughts bool, callBytes, keepCalls int, reminders bool, remindEvery time.Duration) *state {
	return &state{
		showThoughts: showThoughts, callBytes: callBytes, keepCalls: keepCalls, reminders: reminders, remindEvery: remindEvery,
		// Room for a few of the largest call events, so that one alone never drops a page.
		queueBytes: max(clientBytes, 8*(3*callBytes+4<<10)),
		devices:    make(map[string]*deviceView), calls: make(map[string][]callView), clients: make(map[*client]struct{}),
	}
}

// sse formats one event.
func sse(event string, v any) []byte {
	data, err := json.Marshal(v)
	if err != nil { // our own views always encode
		panic(fmt.Sprintf("web: encoding a %s event: %v", event, err))
	}
	return fmt.Appendf(nil, "event: %s\ndata: %s\n\n", event, data)
}

// broadcast sends an event to every page; called with s.mu held, so pages see events in order.
func (s *state) broadcast(event string, v any) {
	msg := sse(event, v)
	for c := range s.clients {
		if c.queued+len(msg) > s.queueBytes {
			s.kick(c)
			continue
		}
		select {
		case c.ch <- msg:
			c.queued += len(msg)
		default:
			s.kick(c)
		}
	}
}

// kick drops a page that fell too far behind; s.mu is held.
func (s *state) kick(c *client) {
	delete(s.clients, c)
	c.kick()
}

// took tells that a page's stream took msg from its queue.
func (s *state) took(c *client, msg []byte) {
	s.mu.Lock()
	c.queued -= len(msg)
	s.mu.Unlock()
}

func (d *deviceView) now() deviceView {
	v := *d
	if d.uptimeAt != (time.Time{}) {
		up := d.uptime
		if d.Connected {
			up += int64(time.Since(d.uptimeAt) / time.Second)
		}
		v.Uptime = &up
	}
	return v
}

func (s *state) sendDevice(d *deviceView) { s.broadcast("device", d.now()) }

func (s *state) registered(d hub.Device) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.devices[d.MAC]
	if v == nil {
		v = &deviceView{MAC: d.MAC}
		s.devices[d.MAC] = v
	}
	if !v.Connected { // a new line: the device may have restarted; its uptime is read again
		v.uptimeAt = time.Time{}
	}
	v.Connected, v.Reason, v.Addr = true, "", d.RemoteAddr
	v.Tools = v.Tools[:0]
	for _, t := range d.Tools {
		v.Tools = append(v.Tools, t.Name)
	}
	s.sendDevice(v)
}

func (s *state) disconnected(mac, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.devices[mac]
	if v == nil {
		return
	}
	if v.uptimeAt != (time.Time{}) { // frozen at its last known value
		v.uptime += int64(time.Since(v.uptimeAt) / time.Second)
		v.uptimeAt = time.Now()
	}
	s.goneSeq++
	v.Connected, v.Reason, v.gone = false, reason, s.goneSeq
	s.sendDevice(v)
	s.forgetGone()
}

// forgetGone drops the disconnected devices gone longest past maxGone. A page already open keeps
// showing them until it loads again.
func (s *state) forgetGone() {
	var gone []*deviceView
	for _, v := range s.devices {
		if !v.Connected {
			gone = append(gone, v)
		}
	}
	if len(gone) <= maxGone {
		return
	}
	slices.SortFunc(gone, func(a, b *deviceView) int { return cmp.Compare(a.gone, b.gone) })
	for _, v := range gone[:len(gone)-maxGone] {
		delete(s.devices, v.MAC)
		delete(s.calls, v.MAC)
	}
}

// applyCall updates a device from a call that succeeded: the status it read, or the volume or
// face it set.
func (s *state) applyCall(mac, tool string, input, result json.RawMessage) {
	var res struct {
		Status     string `json:"status"`
		Volume     *int   `json:"volume"`
		Expression string `json:"expression"`
		Uptime     *int64 `json:"uptime_seconds"`
	}
	_ = json.Unmarshal(result, &res)             // a result of another shape changes nothing
	if res.Status == protocol.StatusSuperseded { // a later call to the same tool took its place
		return
	}
	var in struct {
		Level      *int   `json:"level"`
		Expression string `json:"expression"`
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.devices[mac]
	if v == nil || !v.Connected {
		return
	}
	switch tool {
	case protocol.ToolStatus:
		if res.Volume != nil {
			v.Volume = res.Volume
		}
		if res.Expression != "" {
			v.Expression = res.Expression
		}
		if res.Uptime != nil {
			v.uptime, v.uptimeAt = *res.Uptime, time.Now()
		}
	case protocol.ToolVolume:
		if json.Unmarshal(input, &in) != nil || in.Level == nil {
			return
		}
		v.Volume = in.Level
	case protocol.ToolExpression:
		if json.Unmarshal(input, &in) != nil || in.Expression == "" {
			return
		}
		v.Expression = in.Expression
	default:
		return
	}
	s.sendDevice(v)
}

// addCall logs a call, cut to what the page keeps. The calls of a device the page does not show
// (one it has forgotten) are sent to the open pages but not kept.
func (s *state) addCall(c callView) {
	c.Input = cutJSON(c.Input, s.callBytes)
	c.Result = cutJSON(c.Result, s.callBytes)
	c.Err = cutText(c.Err, s.callBytes)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextCall++
	c.ID = s.nextCall
	c.Millis = float64(c.Duration.Microseconds()) / 1000
	if _, shown := s.devices[c.MAC]; shown || c.MAC == "" {
		kept := append(s.calls[c.MAC], c)
		if len(kept) > s.keepCalls {
			kept = slices.Delete(kept, 0, len(kept)-s.keepCalls)
		}
		s.calls[c.MAC] = kept
	}
	s.broadcast("call", c)
}

// cutMarker ends what was cut from a call's input, result or error, so the page shows it.
const cutMarker = "… [cut: %d bytes, the page keeps %d]"

// cutJSON returns raw, or, when it is over limit bytes, a JSON string of its start and a marker
// saying how long it was, within limit bytes.
func cutJSON(raw json.RawMessage, limit int) json.RawMessage {
	if len(raw) <= limit {
		return raw
	}
	marker := fmt.Sprintf(cutMarker, len(raw), limit)
	keep := limit - len(marker) - 2 // the quotes
	for keep > 0 {
		b, err := json.Marshal(validPrefix(string(raw), keep) + marker)
		if err == nil && len(b) <= limit {
			return b
		}
		keep -= max(len(b)-limit, 1) // escapes made it longer: keep less
	}
	b, _ := json.Marshal(marker)
	return b
}

// cutText is cutJSON for plain text.
func cutText(text string, limit int) string {
	if len(text) <= limit {
		return text
	}
	marker := fmt.Sprintf(cutMarker, len(text), limit)
	return validPrefix(text, max(limit-len(marker), 0)) + marker
}

// validPrefix is s's first n bytes at most, not splitting a UTF-8 character.
func validPrefix(s string, n int) string {
	if n >= len(s) {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func (s *state) startTurn(text, mac string) int { return s.startTurnFrom(text, mac, "") }

func (s *state) startTurnFrom(text, mac, source string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextTurn++
	t := &turnView{ID: s.nextTurn, MAC: mac, Text: text, Source: source}
	s.turns = append(s.turns, t)
	if len(s.turns) > keepTurns {
		s.turns = slices.Delete(s.turns, 0, len(s.turns)-keepTurns)
	}
	s.broadcast("turn", t)
	return t.ID
}

func (s *state) turn(id int) *turnView {
	for _, t := range slices.Backward(s.turns) {
		if t.ID == id {
			return t
		}
	}
	return nil
}

// turnText adds a chunk or a thought to a turn.
func (s *state) turnText(id int, kind, text string) {
	if kind == "thought" && !s.showThoughts {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.turn(id)
	if t == nil {
		return
	}
	if kind == "thought" {
		t.Thought += text
	} else {
		t.Reply += text
	}
	s.broadcast(kind, struct {
		ID   int    `json:"id"`
		Text string `json:"text"`
	}{id, text})
}

// endTurn ends a turn with its final reply, or its error.
func (s *state) endTurn(id int, final, errText string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.turn(id)
	if t == nil {
		return
	}
	if errText == "" {
		t.Reply = final
	}
	t.Err, t.Done = errText, true
	s.broadcast("end", t)
}

type snapshot struct {
	Devices      []deviceView `json:"devices"`
	Calls        []callView   `json:"calls"`
	Turns        []*turnView  `json:"turns"`
	ShowThoughts bool         `json:"show_thoughts"`
	// Reminders says whether the page lists reminders and may announce, and how often (in ms)
	// it reads them again.
	Reminders        bool  `json:"reminders"`
	RemindersEveryMS int64 `json:"reminders_every_ms,omitempty"`
}

// macs are the devices the pages show, connected or not, in order.
func (s *state) macs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.devices))
}

// subscribe registers a page and returns the snapshot it starts from, atomically: no event is
// missed or seen twice.
func (s *state) subscribe() (*client, []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := snapshot{Devices: []deviceView{}, Calls: []callView{}, Turns: s.turns, ShowThoughts: s.showThoughts, Reminders: s.reminders}
	if s.reminders {
		snap.RemindersEveryMS = s.remindEvery.Milliseconds()
	}
	for _, d := range s.devices {
		snap.Devices = append(snap.Devices, d.now())
	}
	slices.SortFunc(snap.Devices, func(a, b deviceView) int { return strings.Compare(a.MAC, b.MAC) })
	for _, calls := range s.calls {
		snap.Calls = append(snap.Calls, calls...)
	}
	slices.SortFunc(snap.Calls, func(a, b callView) int { return cmp.Compare(a.ID, b.ID) })
	if snap.Turns == nil {
		snap.Turns = []*turnView{}
	}
	msg := sse("snapshot", snap) // encoded under the lock: the turns are shared
	c := &client{ch: make(chan []byte, clientBuffer)}
	c.ctx, c.kick = context.WithCancel(context.Background())
	s.clients[c] = struct{}{}
	return c, msg
}

func (s *state) unsubscribe(c *client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.clients[c]; ok {
		s.kick(c)
	}
}

// serveEvents streams the snapshot and then every change until the page goes, falls too far
// behind, or the handler closes.
func (h *Handler) serveEvents(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	c, snap := h.st.subscribe()
	defer h.st.unsubscribe(c)
	// A page dropped for falling behind may be stuck in a write to a client that stopped
	// reading: ending the write now frees what it holds, rather than when the write times out.
	stop := context.AfterFunc(c.ctx, func() { rc.SetWriteDeadline(time.Now()) })
	defer stop()
	if _, err := w.Write(snap); err != nil {
		return
	}
	if rc.Flush() != nil {
		return
	}
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		var msg []byte
		select {
		case msg = <-c.ch:
			h.st.took(c, msg)
		case <-tick.C:
			msg = []byte(": keep-alive\n\n")
		case <-c.ctx.Done():
			h.log.Info("a page fell behind its event stream; it reconnects from a snapshot", "remote", r.RemoteAddr)
			return
		case <-r.Context().Done():
			return
		case <-h.closing.Done():
			return
		}
		if _, err := w.Write(msg); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
	}
}
