package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/devicectl/devicectl/protocol"
)

// Bounds are the time limits a Ledger holds the device to. Compute them from the agent's options
// plus a margin for a loaded machine: they are there to catch a device that never does what it
// must, not one that is a few milliseconds late.
type Bounds struct {
	// Due is how long an answer may take on a line that stays up, unless an Expect says otherwise.
	Due time.Duration
	// Reregister bounds the time from a lost line to the device's next registration request,
	// counted from the server's return when the server was down (the back-off's cap plus a
	// margin), and the time from a connection to its registration request.
	Reregister time.Duration
	// Register bounds how long the device keeps a line whose registration goes unanswered (its
	// RegisterTimeout plus a margin).
	Register time.Duration
	// Stall bounds the time from a stall to the device giving the line up (its ping interval and
	// ping timeout plus a margin).
	Stall time.Duration
	// BackoffMin and BackoffMax bound every back-off wait reported through BackoffWait.
	BackoffMin, BackoffMax time.Duration
}

// Expect says what the device owes for one frame the server sends.
type Expect struct {
	// Kind names the frame in messages and the summary: "execute", "sync", "garbage:...".
	Kind string
	// Call marks an mcp/tool/execute: counted as a call in the summary.
	Call bool
	// ID is the id the answers must carry; nil for a frame with no id the device can read.
	ID json.RawMessage
	// Answers is how many answers carry ID: 1 for a request, 2 for two requests sent with the
	// same id, 0 for a frame that must not be answered (a notification, a stray response).
	Answers int
	// Null: the frame is answered with exactly one error whose id is null (-32700 or -32600).
	Null bool
	// NullOK: the frame is answered exactly once, with ID or, when the device cannot read the id,
	// with id null. Only for frames the device answers inline (see the package documentation).
	NullOK bool
	// Codes are the acceptable outcomes of an answer with ID: 0 for a result, else an error
	// code. Empty accepts any.
	Codes []int64
	// Due is how long the answer may take on a line that stays up; 0 takes Bounds.Due.
	Due time.Duration
	// Tally, if set, counts the outcomes of the answers.
	Tally *Tally
}

// Tally counts the outcomes of a group of requests (0 for a result, else the error code), so a
// test can wait for and judge them.
type Tally struct {
	mu sync.Mutex
	n  map[int64]int
}

func (t *Tally) add(outcome int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n == nil {
		t.n = make(map[int64]int)
	}
	t.n[outcome]++
}

// Count reports how many answers had the outcome (0: a result).
func (t *Tally) Count(outcome int64) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n[outcome]
}

// Total reports how many answers were counted.
func (t *Tally) Total() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, c := range t.n {
		n += c
	}
	return n
}

// errLineDown is what sending on a line that has already ended returns.
var errLineDown = errors.New("chaos: the line is down")

// maxViolations is how many violations a Ledger keeps word for word; the rest are only counted.
const maxViolations = 50

// recentKept is how many answered request ids per ledger are remembered to tell a duplicate
// answer from an answer to a request never sent. Answered requests are otherwise forgotten, so
// the ledger's memory follows what is pending, not what has been: the memory test makes 100,000
// calls through it.
const recentKept = 4096

// Ledger records what the server sent and what the device owes for it, reads what the device
// answered and rendered, and collects violations. All methods are safe for concurrent use.
type Ledger struct {
	b Bounds

	mu          sync.Mutex
	changed     chan struct{} // closed and replaced on every change: Await's wake-up
	lines       map[int]*lineLog
	reqs        map[reqKey]*request // pending: not yet answered as often as expected
	recent      ring[reqKey]        // answered, for telling duplicates apart
	notifs      map[string]notifAt  // ai messages sent and not yet rendered, by type and content
	recentNotif ring[string]
	lastRender  int       // the line of the last ai message rendered
	outages     []outage  // lost lines waiting for the device's next registration
	upAt        time.Time // when the server last came (back) up
	stopAt      time.Time // when the agent was told to stop; zero while it runs
	finished    bool
	st          Report
}

type reqKey struct {
	line int
	id   string // canonical: see canonID
}

type request struct {
	e      Expect
	want   int
	got    int
	sentAt time.Time
	due    time.Duration
	sync   *syncPoint
}

// syncPoint is what a sync probe's answer checks: everything sent before it that the device
// handles inline has been handled.
type syncPoint struct {
	notifSent int // ai messages sent on the line before the probe
}

type notifAt struct {
	line, idx int
}

// lineLog is the ledger's record of one connection.
type lineLog struct {
	id        int
	opened    time.Time
	cut       time.Time // when the server dropped or stalled it; zero if it did not
	stalledAt time.Time
	ended     time.Time
	done      bool
	why       string // how the line ended, as the server saw it

	regs      int       // registration requests on the line
	regAt     time.Time // the first one
	closeOK   bool      // the device may close the line itself (a fault said so)
	regSilent bool      // the registration is not answered in time: the device must give up

	nullWant, nullGot int // id-null answers owed and received since the last sync
	notifSent         int // ai messages sent on the line
	rendered          int // ... and rendered, a prefix of them
	notifsSettled     bool
}

type outage struct {
	line int
	at   time.Time
}

// NewLedger returns an empty ledger holding the device to b.
func NewLedger(b Bounds) *Ledger {
	return &Ledger{
		b:           b,
		changed:     make(chan struct{}),
		lines:       make(map[int]*lineLog),
		reqs:        make(map[reqKey]*request),
		recent:      newRing[reqKey](recentKept),
		notifs:      make(map[string]notifAt),
		recentNotif: newRing[string](recentKept),
		upAt:        time.Now(),
		st: Report{
			Faults:          make(map[string]int),
			CallsLostByLine: make(map[int]int),
			DeviceCloses:    make(map[string]int),
		},
	}
}

// fire wakes every Await. Called with mu held.
func (l *Ledger) fire() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// violate records a broken rule. Called with mu held.
func (l *Ledger) violate(format string, args ...any) {
	l.st.ViolationCount++
	if len(l.st.Violations) < maxViolations {
		l.st.Violations = append(l.st.Violations, fmt.Sprintf(format, args...))
	}
}

// Violate records a broken rule found outside the ledger (by a test's own checks), so it lands
// in the same report.
func (l *Ledger) Violate(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.violate(format, args...)
	l.fire()
}

// Await blocks until cond reports true, re-checking it after every change the ledger records, or
// until ctx is done. cond may call the ledger's methods.
func (l *Ledger) Await(ctx context.Context, cond func() bool) error {
	for {
		l.mu.Lock()
		ch := l.changed
		l.mu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Wake re-checks every Await's condition: for conditions on state the ledger does not hold (a
// tool that has started).
func (l *Ledger) Wake() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fire()
}

// Fault counts one injected fault of the given kind, for the summary.
func (l *Ledger) Fault(kind string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.st.Faults[kind]++
}

// BackoffWait is for the agent's Sleep option: every back-off wait must lie within the configured
// back-off, which is what keeps a device from hammering a server in a hot loop.
func (l *Ledger) BackoffWait(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.st.BackoffWaits++
	if d < l.b.BackoffMin || d > l.b.BackoffMax {
		l.violate("back-off wait of %s outside [%s, %s]", d, l.b.BackoffMin, l.b.BackoffMax)
	}
}

// DeviceLineLost is for the agent's OnLineLost option: it counts the lines the device saw die.
func (l *Ledger) DeviceLineLost(error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.st.DeviceLosses++
}

// Render is for the agent's Render option. Chunks and finals must be rendered in the order they
// were sent, none skipped and none twice; other types (thoughts, unknown ones) are only counted.
func (l *Ledger) Render(m protocol.AIMessage) {
	l.mu.Lock()
	defer l.mu.Unlock()
	defer l.fire()
	if m.Type != protocol.MessageChunk && m.Type != protocol.MessageFinal {
		l.st.OtherRendered++
		return
	}
	key := m.Type + "\x00" + m.Content
	at, ok := l.notifs[key]
	if !ok {
		if l.recentNotif.has(key) {
			l.violate("ai message %s %q rendered twice", m.Type, clipText(m.Content))
		} else {
			l.violate("rendered an ai message the server never sent: %s %q", m.Type, clipText(m.Content))
		}
		return
	}
	delete(l.notifs, key)
	l.recentNotif.add(key)
	l.st.AIRendered++
	if at.line < l.lastRender {
		l.violate("ai message %d of line %d rendered after messages of line %d", at.idx, at.line, l.lastRender)
	}
	l.lastRender = max(l.lastRender, at.line)
	ll := l.lines[at.line]
	switch {
	case at.idx > ll.rendered:
		l.violate("line %d: ai messages %d..%d were skipped: message %d was rendered next", at.line, ll.rendered, at.idx-1, at.idx)
	case at.idx < ll.rendered:
		l.violate("line %d: ai message %d rendered after message %d", at.line, at.idx, ll.rendered-1)
	}
	ll.rendered = max(ll.rendered, at.idx+1)
}

// Stopping records that the agent is about to be stopped: the line it closes then is no fault,
// and outages after it are not waited out.
func (l *Ledger) Stopping() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopAt = time.Now()
}

// Pending reports how many of ids are still owed an answer on line.
func (l *Ledger) Pending(line int, ids ...json.RawMessage) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, id := range ids {
		if k, ok := canonID(id); ok {
			if _, pending := l.reqs[reqKey{line, k}]; pending {
				n++
			}
		}
	}
	return n
}

// PendingOnLiveLines reports how many requests are owed an answer on lines that are up.
func (l *Ledger) PendingOnLiveLines() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for k := range l.reqs {
		if ll := l.lines[k.line]; ll != nil && !ll.done && ll.cut.IsZero() {
			n++
		}
	}
	return n
}

// Report returns the counts so far and the violations found; after Finish, the final ones.
func (l *Ledger) Report() Report {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.st
	r.Faults = cloneMap(l.st.Faults)
	r.CallsLostByLine = cloneMap(l.st.CallsLostByLine)
	r.DeviceCloses = cloneMap(l.st.DeviceCloses)
	r.Violations = slices.Clone(l.st.Violations)
	return r
}

// Finish closes the books once the agent has stopped and the server is closed: it settles the
// rendering of every line and checks that no lost line went without a registration for too long.
func (l *Ledger) Finish() Report {
	l.mu.Lock()
	end := l.stopAt
	if end.IsZero() {
		end = time.Now()
	}
	for _, ll := range l.lines {
		if !ll.done {
			l.violate("line %d still open when the books were closed", ll.id)
		}
	}
	for _, o := range l.outages {
		ref := later(o.at, l.upAt)
		if !ref.Before(end) {
			continue // lost as the agent was being stopped
		}
		if gap := end.Sub(ref); gap > l.b.Reregister {
			l.violate("no registration for %s after line %d was lost (until the stop); want one within %s", gap.Round(time.Millisecond), o.line, l.b.Reregister)
		}
	}
	l.outages = nil
	l.settleNotifs(math.MaxInt)
	if n := len(l.reqs); n > 0 {
		l.violate("%d requests still pending after every line ended", n)
	}
	l.finished = true
	l.fire()
	l.mu.Unlock()
	return l.Report()
}

// The server's side: what it sent and what it saw.

func (l *Ledger) lineOpened(id int, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines[id] = &lineLog{id: id, opened: at}
	l.st.Lines++
	l.fire()
}

// cut records that the server broke the line itself (a drop or a stall): answers it swallows
// from then on are not the device's fault.
func (l *Ledger) cut(id int, at time.Time, stalled bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ll := l.lines[id]
	if ll == nil {
		return
	}
	if ll.cut.IsZero() {
		ll.cut = at
	}
	if stalled && ll.stalledAt.IsZero() {
		ll.stalledAt = at
	}
	l.fire()
}

// closeOK records that the device may close the line itself: the server refused or did not answer
// its registration, or sent a frame over its read limit. silent also bounds how long it may wait.
func (l *Ledger) closeOK(id int, silent bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ll := l.lines[id]; ll != nil {
		ll.closeOK = true
		ll.regSilent = ll.regSilent || silent
	}
}

// lineEnded settles the line: requests still owed an answer are lost with it if their answer
// was not yet due when it was cut, and violations if it was.
func (l *Ledger) lineEnded(id int, at time.Time, why string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	defer l.fire()
	ll := l.lines[id]
	if ll == nil || ll.done {
		return
	}
	ll.done, ll.ended, ll.why = true, at, why
	end := at
	if !ll.cut.IsZero() && ll.cut.Before(end) {
		end = ll.cut
	}
	nullOK := 0
	for k, r := range l.reqs {
		if k.line != id {
			continue
		}
		delete(l.reqs, k)
		if r.e.NullOK && r.got == 0 {
			nullOK++
		}
		if waited := end.Sub(r.sentAt); waited >= r.due {
			l.st.Missing++
			l.violate("line %d: %s %s was answered %d times of %d in the %s the line stayed up after it was sent (due within %s); line %s",
				id, r.e.Kind, idText(r.e.ID), r.got, r.want, waited.Round(time.Millisecond), r.due, why)
			continue
		}
		l.st.Lost++
		if r.e.Call {
			l.st.CallsLost++
			l.st.CallsLostByLine[id]++
		}
	}
	if ll.nullGot > ll.nullWant+nullOK {
		l.violate("line %d: %d answers with id null since the last sync, for %d malformed frames", id, ll.nullGot, ll.nullWant+nullOK)
	}
	l.st.Lost += max(0, ll.nullWant-ll.nullGot)

	stopping := !l.stopAt.IsZero() && !at.Before(l.stopAt)
	switch {
	case !ll.stalledAt.IsZero():
		if took := at.Sub(ll.stalledAt); took > l.b.Stall {
			l.violate("line %d: stalled, and the device gave it up only after %s; want within %s (keepalive)", id, took.Round(time.Millisecond), l.b.Stall)
		}
	case !ll.cut.IsZero(), stopping:
	case ll.closeOK:
		if ll.regSilent && !ll.regAt.IsZero() {
			if took := at.Sub(ll.regAt); took > l.b.Register {
				l.violate("line %d: registration unanswered, and the device gave the line up only after %s; want within %s", id, took.Round(time.Millisecond), l.b.Register)
			}
		}
	default:
		// Nothing the server did explains it: a bad frame that killed the line, or a keepalive
		// that gave up on a server that was answering.
		l.st.DeviceCloses[why]++
		l.violate("line %d: the device closed a line the server kept healthy (%s)", id, why)
	}
	if !stopping {
		l.outages = append(l.outages, outage{line: id, at: at})
	}
}

func (l *Ledger) serverDown(time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.st.Restarts++
	l.fire()
}

func (l *Ledger) serverUp(at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.upAt = at
	l.fire()
}

// registration records a registration request: every lost line before this one has now been
// followed by one, and a line opened before it can render no more.
func (l *Ledger) registration(id int, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	defer l.fire()
	l.st.Registrations++
	ll := l.lines[id]
	if ll == nil {
		return
	}
	ll.regs++
	if ll.regs > 1 {
		l.violate("line %d: registration number %d on one line", id, ll.regs)
		return
	}
	ll.regAt = at
	if took := at.Sub(ll.opened); took > l.b.Reregister {
		l.violate("line %d: registration sent %s after connecting; want within %s", id, took.Round(time.Millisecond), l.b.Reregister)
	}
	kept := l.outages[:0]
	for _, o := range l.outages {
		if o.line >= id {
			kept = append(kept, o)
			continue
		}
		gap := at.Sub(later(o.at, l.upAt))
		l.st.MaxReregister = max(l.st.MaxReregister, gap)
		if gap > l.b.Reregister {
			l.violate("line %d was lost and the next registration (line %d) came %s later; want within %s", o.line, id, gap.Round(time.Millisecond), l.b.Reregister)
		}
	}
	l.outages = kept
	l.settleNotifs(id)
}

func (l *Ledger) registrationAccepted(int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.st.Accepted++
	l.fire()
}

// settleNotifs counts the ai messages of ended lines before line `before` that were never
// rendered as lost with their line: the device reads nothing more from a line once it has opened
// the next one. Called with mu held.
func (l *Ledger) settleNotifs(before int) {
	settled := false
	for _, ll := range l.lines {
		if ll.id < before && ll.done && !ll.notifsSettled {
			ll.notifsSettled = true
			l.st.AILost += ll.notifSent - ll.rendered
			settled = true
		}
	}
	if !settled {
		return
	}
	for k, at := range l.notifs {
		if l.lines[at.line].notifsSettled {
			delete(l.notifs, k)
		}
	}
}

// expect records what the device owes for a frame about to be sent on line.
func (l *Ledger) expect(line int, e Expect, sync bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	ll := l.lines[line]
	if ll == nil || ll.done {
		return errLineDown
	}
	now := time.Now()
	l.st.Requests++
	if e.Call {
		l.st.Calls++
	}
	if e.Null {
		ll.nullWant++
	}
	want := e.Answers
	if e.NullOK && want == 0 {
		want = 1
	}
	if want == 0 {
		return nil
	}
	k, ok := canonID(e.ID)
	if !ok {
		return fmt.Errorf("chaos: expecting %d answers to %s with no usable id %s", want, e.Kind, e.ID)
	}
	key := reqKey{line, k}
	if r := l.reqs[key]; r != nil {
		// The same id again while the first is pending: both requests are owed an answer, and
		// answers cannot tell which is whose, so either's outcomes are acceptable.
		r.want += want
		switch {
		case len(r.e.Codes) == 0 || len(e.Codes) == 0:
			r.e.Codes = nil
		default:
			for _, c := range e.Codes {
				if !slices.Contains(r.e.Codes, c) {
					r.e.Codes = append(slices.Clip(r.e.Codes), c)
				}
			}
		}
		return nil
	}
	due := e.Due
	if due <= 0 {
		due = l.b.Due
	}
	r := &request{e: e, want: want, sentAt: now, due: due}
	if sync {
		r.sync = &syncPoint{notifSent: ll.notifSent}
	}
	l.reqs[key] = r
	return nil
}

// notification records an ai message about to be sent on line.
func (l *Ledger) notification(line int, typ, content string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	ll := l.lines[line]
	if ll == nil || ll.done {
		return errLineDown
	}
	key := typ + "\x00" + content
	if _, dup := l.notifs[key]; dup {
		return fmt.Errorf("chaos: ai message %s %q sent twice: the order check needs unique messages", typ, content)
	}
	l.notifs[key] = notifAt{line: line, idx: ll.notifSent}
	ll.notifSent++
	l.st.AISent++
	return nil
}

// response records an answer the device sent: code is 0 for a result.
func (l *Ledger) response(line int, rawID json.RawMessage, code int64, result bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	defer l.fire()
	ll := l.lines[line]
	if ll == nil {
		return
	}
	if rawID == nil {
		l.violate("line %d: a response without an id", line)
		return
	}
	k, ok := canonID(rawID)
	if !ok {
		switch {
		case result:
			l.violate("line %d: a result with id null", line)
		case code != protocol.CodeParseError && code != protocol.CodeInvalidRequest:
			l.violate("line %d: error %d with id null; only -32700 and -32600 may have no id", line, code)
		}
		ll.nullGot++
		return
	}
	key := reqKey{line, k}
	r := l.reqs[key]
	if r == nil {
		if l.recent.has(key) {
			l.violate("line %d: id %s answered more often than it was sent", line, rawID)
		} else {
			l.violate("line %d: an answer with id %s, which the server never sent on this line", line, rawID)
		}
		return
	}
	r.got++
	outcome := code
	if result {
		outcome = 0
	}
	if len(r.e.Codes) > 0 && !slices.Contains(r.e.Codes, outcome) {
		l.violate("line %d: %s %s answered with %s, want one of %s", line, r.e.Kind, idText(r.e.ID), outcomeText(outcome), codesText(r.e.Codes))
	}
	if r.e.Tally != nil {
		r.e.Tally.add(outcome)
	}
	if outcome == protocol.CodeBusy && r.e.Call {
		l.st.Busy++
	}
	if r.got < r.want {
		return
	}
	delete(l.reqs, key)
	l.recent.add(key)
	l.st.Answered++
	if r.e.Call {
		l.st.CallsAnswered++
	}
	if r.sync != nil {
		l.syncAnswered(ll, r)
	}
}

// syncAnswered checks what a sync probe's answer proves: every malformed frame sent before it
// was answered inline (the id-null answers add up), and every ai message sent before it was
// rendered. Called with mu held.
func (l *Ledger) syncAnswered(ll *lineLog, r *request) {
	var nullOK []reqKey
	for k, p := range l.reqs {
		if k.line == ll.id && p.e.NullOK && p.got == 0 {
			nullOK = append(nullOK, k)
		}
	}
	if want := ll.nullWant + len(nullOK); ll.nullGot != want {
		l.violate("line %d: %d answers with id null to the malformed frames sent before sync %s; want %d", ll.id, ll.nullGot, r.e.ID, want)
	}
	for _, k := range nullOK { // answered with id null: settled by the count above
		delete(l.reqs, k)
		l.st.Answered++
	}
	ll.nullWant, ll.nullGot = 0, 0
	if ll.rendered < r.sync.notifSent {
		l.violate("line %d: %d of the %d ai messages sent before sync %s were rendered by the time it was answered", ll.id, ll.rendered, r.sync.notifSent, r.e.ID)
	}
}

func (l *Ledger) deviceProblem(line int, format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.violate("line %d: "+format, append([]any{line}, args...)...)
	l.fire()
}

func idText(id json.RawMessage) string {
	if id == nil {
		return "(no id)"
	}
	return clipText(string(id))
}

func outcomeText(o int64) string {
	if o == 0 {
		return "a result"
	}
	return fmt.Sprintf("error %d", o)
}

func codesText(codes []int64) string {
	var b bytes.Buffer
	for i, c := range codes {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(outcomeText(c))
	}
	return b.String()
}

func clipText(s string) string {
	const limit = 60
	if len(s) <= limit {
		return s
	}
	return s[:limit] + "..."
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func cloneMap[K comparable, V any](m map[K]V) map[K]V {
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// ring remembers the last n values added. It is only searched when an answer or a rendered
// message is already known to be wrong, so a linear scan will do; a map would churn, and its
// rehashing would show up in the memory test as growth that is not the agent's.
type ring[T comparable] struct {
	vals []T
	next int
}

func newRing[T comparable](n int) ring[T] { return ring[T]{vals: make([]T, 0, n)} }

func (r *ring[T]) add(v T) {
	if len(r.vals) < cap(r.vals) {
		r.vals = append(r.vals, v)
		return
	}
	r.vals[r.next] = v
	r.next = (r.next + 1) % len(r.vals)
}

func (r *ring[T]) has(v T) bool { return slices.Contains(r.vals, v) }
