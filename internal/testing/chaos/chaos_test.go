package chaos_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/devicectl/devicectl/internal/testing/chaos"
	"github.com/devicectl/devicectl/protocol"
)

// TestChaos runs a real agent against the hostile server for CHAOS_TIME (default 8s, 3s with
// -short), injecting faults at seeded random points between normal traffic, and fails on any
// violation of the ledger's invariants (see package chaos) or a leaked goroutine. CHAOS_SEED
// replays a run's sequence of actions; timing, and so the exact interleaving, still varies. It
// runs once on tools that may block and once on instant ones (parts), each for CHAOS_TIME.
func TestChaos(t *testing.T) {
	for _, p := range parts {
		t.Run(p.name, func(t *testing.T) { chaosRun(t, p.instant) })
	}
}

func chaosRun(t *testing.T, instant bool) {
	checkLeaks(t)
	def := 8 * time.Second
	if testing.Short() {
		def = 3 * time.Second
	}
	dur := envDuration(t, "CHAOS_TIME", def)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("CHAOS_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("CHAOS_SEED=%q: want an unsigned integer", s)
		}
	}
	t.Logf("chaos: seed=%d time=%s (replay the actions with CHAOS_SEED=%d)", seed, dur, seed)

	led := chaos.NewLedger(bounds())
	srv := startServer(t, led)
	gs := newGates(led)
	stop := runAgent(t, agentOptions(srv.URL(), chaosRegistry(t, gs, nil, instant), led), led)

	m := &monkey{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), srv: srv, led: led, gates: gs}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m.run(ctx, time.Now().Add(dur))

	// Wind down: the device back on a registered line, and every answer it owes in.
	ready, cancelReady := context.WithTimeout(ctx, readyWait)
	if _, err := srv.WaitReady(ready); err != nil {
		led.Violate("invariant 3: no registered line within %s at the end of the run: %v", readyWait, err)
	}
	cancelReady()
	settle, cancelSettle := context.WithTimeout(ctx, bounds().Due+margin)
	if err := led.Await(settle, func() bool { return led.PendingOnLiveLines() == 0 }); err != nil {
		t.Logf("%d requests still unanswered on a live line at the end (the ledger reports them)", led.PendingOnLiveLines())
	}
	cancelSettle()
	gs.releaseAll()
	stop()
	srv.Close()
	r := led.Finish()

	t.Logf("chaos: seed=%d time=%s %s", seed, dur, r.Summary())
	for _, v := range r.Violations {
		t.Errorf("violation: %s", v)
	}
	if r.ViolationCount > len(r.Violations) {
		t.Errorf("... and %d more violations", r.ViolationCount-len(r.Violations))
	}
	if r.ViolationCount > 0 {
		t.Errorf("seed %d: %d violations (replay with CHAOS_SEED=%d)", seed, r.ViolationCount, seed)
	}
	// A run that made no calls, or broke nothing, proves nothing.
	if r.CallsAnswered == 0 || len(r.Faults) == 0 || r.Reconnects() == 0 {
		t.Errorf("the run did too little to test anything: %s", r.Summary())
	}
}

// readyWait bounds the wait for a registered line after a fault: up to three refused or silent
// registrations in a row, a stall, the back-offs between, and the margin.
const readyWait = 15 * time.Second

// awaitWithin waits, at most d, until cond holds (see Ledger.Await).
func awaitWithin(ctx context.Context, led *chaos.Ledger, d time.Duration, cond func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return led.Await(ctx, cond)
}

// monkey drives one run: actions chosen by a seeded random source, each on the line that is up.
type monkey struct {
	rng   *rand.Rand
	srv   *chaos.Server
	led   *chaos.Ledger
	gates *gates
	seq   int      // numbers ai message content, so every chunk is unique and its place known
	trash []string // garbage kinds not yet sent in this run: each is sent once before any repeats
}

type action struct {
	name   string
	weight int
	fault  bool
	run    func(m *monkey, ctx context.Context, l *chaos.Line)
}

// actions are what the monkey does. Normal traffic outweighs faults so every fault is followed by
// traffic that shows whether the device recovered.
var actions = []action{
	{"execs", 30, false, (*monkey).execs},
	{"chat", 25, false, (*monkey).chat},
	{"garbage", 15, false, (*monkey).garbage},
	{"flood", 5, true, (*monkey).flood},
	{"drop", 4, true, (*monkey).drop},
	{"drop-before-answer", 3, true, (*monkey).dropBeforeAnswer},
	{"drop-after-answer", 3, true, (*monkey).dropAfterAnswer},
	{"drop-mid-burst", 3, true, (*monkey).dropMidBurst},
	{"restart", 2, true, (*monkey).restart},
	{"stall", 1, true, (*monkey).stall},
	{"reg-refuse", 2, true, regFault(chaos.RegRefuse)},
	{"reg-slow", 2, true, regFault(chaos.RegSlow)},
	{"reg-silent", 1, true, regFault(chaos.RegSilent)},
	{"reg-late", 1, true, regFault(chaos.RegLate)},
	{"reg-odd-ack", 1, true, regFault(chaos.RegOddAck)},
	{"oversize", 1, true, (*monkey).oversize},
}

func (m *monkey) run(ctx context.Context, until time.Time) {
	// Every fault once, in a seeded order and with traffic between, before chance takes over:
	// even a short run covers them all.
	var first []action
	for _, a := range actions {
		if a.fault {
			first = append(first, a)
		}
	}
	m.rng.Shuffle(len(first), func(i, j int) { first[i], first[j] = first[j], first[i] })
	m.trash = chaos.GarbageKinds()
	m.rng.Shuffle(len(m.trash), func(i, j int) { m.trash[i], m.trash[j] = m.trash[j], m.trash[i] })

	for i := 0; time.Now().Before(until); i++ {
		ready, cancel := context.WithTimeout(ctx, readyWait)
		l, err := m.srv.WaitReady(ready)
		cancel()
		if err != nil {
			m.led.Violate("invariant 3: no registered line within %s: %v", readyWait, err)
			return
		}
		var a action
		if i%2 == 1 && len(first) > 0 {
			a, first = first[0], first[1:]
		} else {
			a = m.pick()
		}
		if a.fault {
			m.led.Fault(a.name)
		}
		a.run(m, ctx, l)
	}
}

func (m *monkey) pick() action {
	total := 0
	for _, a := range actions {
		total += a.weight
	}
	n := m.rng.IntN(total)
	for _, a := range actions {
		if n < a.weight {
			return a
		}
		n -= a.weight
	}
	return actions[0]
}

// id returns a fresh id for l, now and then one of the awkward ones a server may pick: the
// empty string, escapes the device decodes and must echo as the same string, zero, the largest
// int64. They may repeat on a line, which is fine: the ledger then owes each request an answer.
func (m *monkey) id(l *chaos.Line) json.RawMessage {
	if m.rng.IntN(20) == 0 {
		odd := []string{`""`, `"\u00e9t\u00e9 \"q\" \\ \/"`, `"é 中文 🙂"`, `"\ud83d\ude42"`, `0`, `9223372036854775807`}
		return json.RawMessage(odd[m.rng.IntN(len(odd))])
	}
	return l.NewID(m.rng.IntN(3) == 0)
}

// sync sends a sync probe and waits for its answer (see Line.Sync).
func (m *monkey) sync(ctx context.Context, l *chaos.Line) {
	ctx, cancel := context.WithTimeout(ctx, bounds().Due)
	defer cancel()
	l.Sync(ctx)
}

// await waits for the answers to ids, or the line's end, within the answer's due time.
func (m *monkey) await(ctx context.Context, l *chaos.Line, ids ...json.RawMessage) {
	ctx, cancel := context.WithTimeout(ctx, bounds().Due+margin)
	defer cancel()
	l.Await(ctx, ids...)
}

func lineDown(l *chaos.Line) bool {
	select {
	case <-l.Done():
		return true
	default:
		return false
	}
}

// execs sends a few executes back to back, most of them good, and waits for their answers.
func (m *monkey) execs(ctx context.Context, l *chaos.Line) {
	n := 1 + m.rng.IntN(12)
	ids := make([]json.RawMessage, 0, n)
	for i := range n {
		id := m.id(l)
		var err error
		switch r := m.rng.IntN(20); {
		case r == 0:
			err = l.Execute(id, "fail", `{}`, chaos.Expect{Codes: []int64{protocol.CodeServerError, protocol.CodeBusy}})
		case r == 1:
			err = l.Execute(id, chaos.EchoTool, `{"n":"not a number"}`, chaos.Expect{Codes: []int64{protocol.CodeInvalidParams}})
		case r == 2:
			err = l.Execute(id, "no_such_tool", `{}`, chaos.Expect{Codes: []int64{protocol.CodeInvalidParams}})
		case r == 3:
			err = l.Execute(id, chaos.EchoTool, "", chaos.Expect{Codes: []int64{protocol.CodeInvalidParams}}) // tool_input absent
		default:
			s, _ := json.Marshal(fmt.Sprintf("call %d · %s", i, strings.Repeat("x", m.rng.IntN(64))))
			err = l.Execute(id, chaos.EchoTool, fmt.Sprintf(`{"n":%d,"s":%s}`, i, s), chaos.Expect{Codes: []int64{0, protocol.CodeBusy}})
		}
		if err != nil {
			return // the line is gone; the ledger has what was sent
		}
		ids = append(ids, id)
	}
	m.await(ctx, l, ids...)
}

// chat streams one reply: numbered chunks, now and then garbage between them, and a final; then
// a sync, by whose answer every one of them must have been rendered.
func (m *monkey) chat(ctx context.Context, l *chaos.Line) {
	var text strings.Builder
	n := m.rng.IntN(40)
	for range n {
		c := fmt.Sprintf("<%d é>", m.seq)
		m.seq++
		if l.Message(protocol.MessageChunk, c) != nil {
			return
		}
		text.WriteString(c)
		if m.rng.IntN(12) == 0 {
			m.sendGarbage(l)
		}
		if m.rng.IntN(20) == 0 && l.Message(protocol.MessageThought, "thinking") != nil {
			return
		}
	}
	if n == 0 { // a reply that comes whole
		fmt.Fprintf(&text, "whole reply %d", m.seq)
		m.seq++
	}
	if l.Message(protocol.MessageFinal, text.String()) != nil {
		return
	}
	m.sync(ctx, l)
}

// garbage sends a few malformed or unexpected frames, then a sync, and waits for the answers
// owed to those with an id.
func (m *monkey) garbage(ctx context.Context, l *chaos.Line) {
	var ids []json.RawMessage
	for range 1 + m.rng.IntN(4) {
		g, ok := m.sendGarbage(l)
		if !ok {
			return
		}
		if g.Expect.ID != nil && g.Expect.Answers > 0 {
			ids = append(ids, g.Expect.ID)
		}
	}
	m.sync(ctx, l)
	m.await(ctx, l, ids...)
}

func (m *monkey) sendGarbage(l *chaos.Line) (chaos.Garbage, bool) {
	var kind string
	if len(m.trash) > 0 {
		kind, m.trash = m.trash[0], m.trash[1:]
	} else {
		kinds := chaos.GarbageKinds()
		kind = kinds[m.rng.IntN(len(kinds))]
	}
	g := chaos.MakeGarbage(kind, m.rng, l)
	m.led.Fault("garbage:" + kind)
	return g, l.SendGarbage(g) == nil
}

// flood sends more calls of the hold tool than the device may run at once. The device must
// start at most MaxInFlight of them and answer every other one -32002 at once; once the gate
// opens, the ones that ran answer too. Nothing may be lost.
func (m *monkey) flood(ctx context.Context, l *chaos.Line) {
	g := m.gates.new()
	defer g.release()
	n := maxInFlight + 1 + m.rng.IntN(8)
	tally := &chaos.Tally{}
	ids := make([]json.RawMessage, 0, n)
	for range n {
		id := l.NewID(m.rng.IntN(2) == 0)
		e := chaos.Expect{Kind: "flood", Codes: []int64{0, protocol.CodeBusy, protocol.CodeToolTimeout}, Tally: tally}
		if l.Execute(id, "hold", fmt.Sprintf(`{"gate":%d}`, g.id), e) != nil {
			return
		}
		ids = append(ids, id)
	}
	// Refusals are answered inline and the admitted calls start on their own goroutines: wait
	// until each call is one or the other.
	err := awaitWithin(ctx, m.led, bounds().Due, func() bool {
		return lineDown(l) || tally.Count(protocol.CodeBusy)+int(g.started.Load()) >= n
	})
	if err == nil && !lineDown(l) {
		busy, started := tally.Count(protocol.CodeBusy), int(g.started.Load())
		if started > maxInFlight || busy < n-maxInFlight {
			m.led.Violate("line %d: flood of %d calls with MaxInFlight %d: %d started, %d refused busy", l.ID(), n, maxInFlight, started, busy)
		}
	}
	g.release()
	m.await(ctx, l, ids...)
}

func (m *monkey) dropMode() chaos.DropMode {
	return chaos.DropMode(m.rng.IntN(3))
}

// waitEnd waits for the server to see the line end.
func waitEnd(ctx context.Context, l *chaos.Line, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-l.Done():
	case <-t.C:
	case <-ctx.Done():
	}
}

func (m *monkey) drop(ctx context.Context, l *chaos.Line) {
	l.Drop(m.dropMode())
	waitEnd(ctx, l, 15*time.Second)
}

// dropBeforeAnswer drops the line while a call runs: its answer has nowhere to go.
func (m *monkey) dropBeforeAnswer(ctx context.Context, l *chaos.Line) {
	g := m.gates.new()
	defer g.release()
	id := l.NewID(false)
	tally := &chaos.Tally{}
	if l.Execute(id, "hold", fmt.Sprintf(`{"gate":%d}`, g.id), chaos.Expect{Kind: "held", Codes: []int64{0, protocol.CodeBusy, protocol.CodeToolTimeout}, Tally: tally}) != nil {
		return
	}
	awaitWithin(ctx, m.led, bounds().Due, func() bool {
		return lineDown(l) || g.started.Load() > 0 || tally.Total() > 0
	})
	l.Drop(m.dropMode())
	g.release() // the call finishes into a closed line
	waitEnd(ctx, l, 15*time.Second)
}

// dropAfterAnswer drops the line the moment an answer arrives, sometimes with another call still
// running behind it.
func (m *monkey) dropAfterAnswer(ctx context.Context, l *chaos.Line) {
	g := m.gates.new()
	defer g.release()
	id := l.NewID(m.rng.IntN(2) == 0)
	if l.Execute(id, chaos.EchoTool, `{"n":7}`, chaos.Expect{Codes: []int64{0, protocol.CodeBusy}}) != nil {
		return
	}
	if m.rng.IntN(2) == 0 {
		if l.Execute(l.NewID(false), "hold", fmt.Sprintf(`{"gate":%d}`, g.id), chaos.Expect{Kind: "held", Codes: []int64{0, protocol.CodeBusy, protocol.CodeToolTimeout}}) != nil {
			return
		}
	}
	m.await(ctx, l, id)
	l.Drop(m.dropMode())
	g.release()
	waitEnd(ctx, l, 15*time.Second)
}

// dropMidBurst drops the line after some of a burst of calls were answered.
func (m *monkey) dropMidBurst(ctx context.Context, l *chaos.Line) {
	const n = 10
	tally := &chaos.Tally{}
	for range n {
		if l.Execute(m.id(l), chaos.EchoTool, `{"n":1}`, chaos.Expect{Codes: []int64{0, protocol.CodeBusy}, Tally: tally}) != nil {
			return
		}
	}
	k := m.rng.IntN(n)
	awaitWithin(ctx, m.led, bounds().Due, func() bool { return lineDown(l) || tally.Total() >= k })
	l.Drop(m.dropMode())
	waitEnd(ctx, l, 15*time.Second)
}

// restart takes the whole server away for a while and brings it back on the same address.
func (m *monkey) restart(ctx context.Context, _ *chaos.Line) {
	down := 20*time.Millisecond + time.Duration(m.rng.IntN(400))*time.Millisecond
	if err := m.srv.Restart(ctx, down, m.dropMode()); err != nil {
		m.led.Violate("the chaos server could not restart: %v", err)
	}
}

// stall makes the line a black hole; the device's keepalive must notice.
func (m *monkey) stall(ctx context.Context, l *chaos.Line) {
	// Calls and chunks into the hole: lost with the line, never due.
	brief, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	m.execs(brief, l)
	l.Stall()
	m.execs(brief, l)
	waitEnd(ctx, l, bounds().Stall+margin)
}

// regFault makes the device's next registrations go wrong in one way, then drops the line so it
// runs into them.
func regFault(f chaos.RegFault) func(m *monkey, ctx context.Context, l *chaos.Line) {
	return func(m *monkey, ctx context.Context, l *chaos.Line) {
		n := 1 + m.rng.IntN(2)
		for range n {
			p := chaos.RegPolicy{Fault: f}
			switch f {
			case chaos.RegSlow:
				p.Delay = time.Duration(10+m.rng.IntN(int(registerTimeout/time.Millisecond)/2)) * time.Millisecond
			case chaos.RegLate:
				p.Delay = registerTimeout + 200*time.Millisecond
			}
			m.srv.QueueRegistration(p)
		}
		l.Drop(m.dropMode())
		waitEnd(ctx, l, 15*time.Second)
	}
}

// oversize sends a frame over the device's read limit (1 MiB): it must close the line (1009) and
// come back, never die of it.
func (m *monkey) oversize(ctx context.Context, l *chaos.Line) {
	l.ExpectDeviceClose()
	big := `{"jsonrpc":"2.0","method":"` + protocol.MethodAIMessage + `","params":{"type":"chunk","content":"` + strings.Repeat("x", 3<<19) + `"}}`
	l.Send(websocket.MessageText, []byte(big), chaos.Expect{Kind: "oversize"})
	waitEnd(ctx, l, 15*time.Second)
}
