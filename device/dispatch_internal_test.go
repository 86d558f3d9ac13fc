package device

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
)

// The scheduler's tests run in synctest bubbles: the tools sleep or block on channels, and the
// deadline watcher's timer runs on the bubble's clock, so a 10s timeout costs nothing.

// answer is what a testReply was told.
type answer struct {
	result string // the result as JSON; "" for an error
	code   int64
	msg    string
	detail string
}

// testReply records one call's answers; more than one is a failure the tests look for.
type testReply struct {
	mu  *sync.Mutex
	got map[int][]answer
	n   int
}

func (r testReply) result(_ context.Context, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got[r.n] = append(r.got[r.n], answer{result: string(b)})
	return nil
}

func (r testReply) fail(code int64, message, details string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got[r.n] = append(r.got[r.n], answer{code: code, msg: message, detail: details})
}

// harness is a dispatcher with a few tools, and the answers of the calls submitted to it.
type harness struct {
	t   *testing.T
	d   *dispatcher
	mu  sync.Mutex
	got map[int][]answer
	n   int
}

// testTool is a tool with an "n" integer parameter.
func testTool(t *testing.T, name string, sub tools.SubType, resources []string, fn tools.Handler) *tools.Tool {
	t.Helper()
	schema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"n": {Type: "integer"}}}
	return &tools.Tool{
		Declaration: tools.Declaration{Name: name, Description: "a test tool", MainType: tools.Remote, SubType: sub, Parameters: schema},
		Resources:   resources,
		Handler:     fn,
	}
}

func newHarness(t *testing.T, o Options, ts ...*tools.Tool) *harness {
	reg := tools.NewRegistry()
	for _, tool := range ts {
		if err := reg.Add(tool); err != nil {
			t.Fatal(err)
		}
	}
	o.Registry = reg
	o.Logger = slog.New(slog.DiscardHandler)
	if o.ToolTimeout == 0 {
		o.ToolTimeout = 10 * time.Second
	}
	if o.MaxInFlight == 0 {
		o.MaxInFlight = 8
	}
	if o.MaxQueued == 0 {
		o.MaxQueued = 256
	}
	h := &harness{t: t, d: newDispatcher(&o), got: map[int][]answer{}}
	t.Cleanup(h.d.close)
	return h
}

// submit sends call number h.n (from 0) of tool with {"n": n}; it returns the refusal, if any.
func (h *harness) submit(ctx context.Context, tool string, n int) *CallError {
	h.mu.Lock()
	i := h.n
	h.n++
	h.mu.Unlock()
	input := json.RawMessage(fmt.Sprintf(`{"n":%d}`, n))
	return h.d.submit(ctx, h.d.settings.Load(), tool, input, ViaServer, testReply{mu: &h.mu, got: h.got, n: i})
}

// answers returns a copy of the answers so far, by call number.
func (h *harness) answers() map[int][]answer {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := make(map[int][]answer, len(h.got))
	for k, v := range h.got {
		m[k] = slices.Clone(v)
	}
	return m
}

// onlyAnswer returns call i's single answer, failing the test if it has none or several.
func (h *harness) onlyAnswer(i int) answer {
	h.t.Helper()
	a := h.answers()[i]
	if len(a) != 1 {
		h.t.Fatalf("call %d answered %d times: %+v", i, len(a), a)
		return answer{}
	}
	return a[0]
}

// recorder is a tool body that records the n of each call it runs, in order, and how many ran
// at once at most.
type recorder struct {
	mu     sync.Mutex
	ran    []int
	inside int
	most   int
	delay  time.Duration
}

func (r *recorder) handler(ctx context.Context, in json.RawMessage) (any, error) {
	var p struct{ N int }
	if err := json.Unmarshal(in, &p); err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.ran = append(r.ran, p.N)
	r.inside++
	r.most = max(r.most, r.inside)
	r.mu.Unlock()
	time.Sleep(r.delay)
	r.mu.Lock()
	r.inside--
	r.mu.Unlock()
	return map[string]int{"n": p.N}, nil
}

// Calls on one part run one at a time, in the order they arrived, however many there are; the
// queue holds them all without refusing any.
func TestQueueRunsInArrivalOrderPerPart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{delay: time.Millisecond}
		free := &recorder{delay: time.Millisecond}
		h := newHarness(t, Options{},
			testTool(t, "arm", tools.Query, []string{"arm"}, rec.handler),
			testTool(t, "free", tools.Query, nil, free.handler))
		const n = 100
		for i := range n {
			tool := "arm"
			if i%4 == 3 {
				tool = "free"
			}
			if err := h.submit(context.Background(), tool, i); err != nil {
				t.Fatalf("call %d refused: %v", i, err)
			}
		}
		synctest.Wait()
		time.Sleep(time.Second)
		synctest.Wait()
		var want []int
		for i := range n {
			if i%4 != 3 {
				want = append(want, i)
			}
			if a := h.onlyAnswer(i); a.result == "" {
				t.Errorf("call %d: %+v, want a result", i, a)
			}
		}
		if !slices.Equal(rec.ran, want) {
			t.Errorf("the arm ran %v, want the arrival order %v", rec.ran, want)
		}
		if rec.most != 1 {
			t.Errorf("%d calls drove the arm at once, want 1", rec.most)
		}
		if free.most < 2 {
			t.Errorf("tools on no part peaked at %d at once, want them to overlap", free.most)
		}
	})
}

// MaxInFlight run, MaxQueued wait, and only the call beyond both is refused, with details.
func TestQueueBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		h := newHarness(t, Options{MaxInFlight: 2, MaxQueued: 3},
			testTool(t, "block", tools.Query, nil, func(ctx context.Context, _ json.RawMessage) (any, error) {
				<-release
				return "ok", nil
			}))
		for i := range 5 {
			if err := h.submit(context.Background(), "block", i); err != nil {
				t.Fatalf("call %d refused with 2 running and %d waiting: %v", i, i-2, err)
			}
		}
		err := h.submit(context.Background(), "block", 5)
		if err == nil || err.Code != protocol.CodeBusy || err.Details != "2 calls running and 3 waiting" {
			t.Errorf("the call past the queue = %v, want -32002 with 2 running and 3 waiting", err)
		}
		close(release)
		synctest.Wait()
		for i := range 5 {
			if a := h.onlyAnswer(i); a.result != `"ok"` {
				t.Errorf("call %d: %+v", i, a)
			}
		}
	})
}

// With MaxQueued negative nothing waits: the call past MaxInFlight is refused as before queues.
func TestQueueNone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		block := func(ctx context.Context, _ json.RawMessage) (any, error) {
			<-release
			return "ok", nil
		}
		h := newHarness(t, Options{MaxInFlight: 1, MaxQueued: -1}, testTool(t, "block", tools.Query, nil, block))
		if err := h.submit(context.Background(), "block", 0); err != nil {
			t.Fatal(err)
		}
		if err := h.submit(context.Background(), "block", 1); err == nil || err.Details != "1 calls already in flight" {
			t.Errorf("second call = %v, want -32002 1 calls already in flight", err)
		}
		// With a slot free, a call on a busy part cannot wait either.
		h2 := newHarness(t, Options{MaxInFlight: 2, MaxQueued: -1}, testTool(t, "arm", tools.Query, []string{"arm"}, block))
		if err := h2.submit(context.Background(), "arm", 0); err != nil {
			t.Fatal(err)
		}
		if err := h2.submit(context.Background(), "arm", 1); err == nil || !strings.Contains(err.Details, "hardware is busy") {
			t.Errorf("a call on a busy part = %v, want -32002 saying its hardware is busy", err)
		}
		close(release)
		synctest.Wait()
	})
}

// A waiting control call followed by a call to the same tool is answered superseded and never
// runs; a call of another tool between them keeps it, and so does a query.
func TestQueueSupersedes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		rec := &recorder{}
		set := func(ctx context.Context, in json.RawMessage) (any, error) {
			if len(rec.ran) == 0 {
				defer func() { <-gate }() // the first call holds the part until the test opens the gate
			}
			return rec.handler(ctx, in)
		}
		var reports sync.Map // call input -> CallReport
		onCall := func(r CallReport) { reports.Store(string(r.Input), r) }
		h := newHarness(t, Options{OnCall: onCall},
			testTool(t, "set", tools.Control, []string{"speaker"}, set),
			testTool(t, "read", tools.Query, []string{"speaker"}, rec.handler))
		for i, tool := range []string{"set", "set", "set", "set", "read", "set", "set"} {
			if err := h.submit(context.Background(), tool, i); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		close(gate)
		synctest.Wait()
		// 1 and 2 are replaced by the next set; 3 is kept by the read after it; 5 by 6.
		if want := []int{0, 3, 4, 6}; !slices.Equal(rec.ran, want) {
			t.Errorf("ran %v, want %v", rec.ran, want)
		}
		for _, i := range []int{1, 2, 5} {
			if a := h.onlyAnswer(i); !strings.Contains(a.result, `"status":"superseded"`) {
				t.Errorf("call %d: %+v, want a superseded result", i, a)
			}
			// OnCall hears of it as of any answered call: a result, code 0.
			r, ok := reports.Load(fmt.Sprintf(`{"n":%d}`, i))
			if res, _ := r.(CallReport).Result.(protocol.ExecuteResult); !ok || r.(CallReport).Code != 0 || res.Status != protocol.StatusSuperseded {
				t.Errorf("OnCall report of call %d: %+v, want its superseded result", i, r)
			}
		}
		for _, i := range []int{0, 3, 4, 6} {
			if a := h.onlyAnswer(i); a.result != fmt.Sprintf(`{"n":%d}`, i) {
				t.Errorf("call %d: %+v, want its own result", i, a)
			}
		}
	})
}

// A Relative tool's calls all count: none is superseded.
func TestQueueKeepsRelativeCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{delay: time.Second}
		up := testTool(t, "volume_up", tools.Control, []string{"speaker"}, rec.handler)
		up.Relative = true
		h := newHarness(t, Options{}, up)
		for i := range 5 {
			if err := h.submit(context.Background(), "volume_up", i); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if want := []int{0, 1, 2, 3, 4}; !slices.Equal(rec.ran, want) {
			t.Errorf("ran %v, want every call: %v", rec.ran, want)
		}
	})
}

// A hung part holds up only its own queue: the calls queued on it take no slot, other tools run
// at once, and the hung call and those behind it are answered -32001 at their deadlines while the
// tool keeps the part until it returns.
func TestQueueHungPart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		unhang := make(chan struct{})
		free := &recorder{}
		h := newHarness(t, Options{MaxInFlight: 2, ToolTimeout: 5 * time.Second},
			testTool(t, "face", tools.Query, []string{"face"}, func(ctx context.Context, _ json.RawMessage) (any, error) {
				<-unhang // ignores its context, as a wedged program would
				return "shown", nil
			}),
			testTool(t, "speak", tools.Query, []string{"speaker"}, free.handler))
		for i := range 10 {
			if err := h.submit(context.Background(), "face", i); err != nil {
				t.Fatalf("face call %d: %v", i, err)
			}
		}
		start := time.Now()
		for i := range 20 {
			if err := h.submit(context.Background(), "speak", 10+i); err != nil {
				t.Fatalf("speak call %d refused behind a hung face: %v", i, err)
			}
		}
		synctest.Wait()
		for i := 10; i < 30; i++ {
			if a := h.onlyAnswer(i); a.result == "" {
				t.Errorf("speak call %d: %+v", i, a)
			}
		}
		if since := time.Since(start); since != 0 {
			t.Errorf("the speaker calls took %v behind a hung face, want no time", since)
		}
		time.Sleep(5*time.Second + timeoutGrace)
		synctest.Wait()
		for i := range 10 {
			if a := h.onlyAnswer(i); a.code != protocol.CodeToolTimeout || a.msg != "tool timed out after 5s" {
				t.Errorf("face call %d: %+v, want -32001", i, a)
			}
		}
		// The hung call still owns the face: a new one waits for it, and runs once it returns.
		if err := h.submit(context.Background(), "face", 30); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if _, ok := h.answers()[30]; ok {
			t.Error("a face call ran while the hung one still owned the face")
		}
		close(unhang)
		synctest.Wait()
		if a := h.onlyAnswer(30); a.result != `"shown"` {
			t.Errorf("face call after the hung one returned: %+v", a)
		}
	})
}

// A running call's context carries its deadline and ends with context.DeadlineExceeded when it
// passes, from the deadline watcher's timer; a context the tool derives from it ends then too,
// with that cause. A tool that honours it is answered -32001 at once, not after the grace.
func TestRunningCallDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		type seen struct {
			deadline   time.Time
			ok         bool
			err, child error
			cause      error
			ended      time.Time
		}
		got := make(chan seen, 1)
		h := newHarness(t, Options{ToolTimeout: 2 * time.Second},
			testTool(t, "wait", tools.Query, []string{"arm"}, func(ctx context.Context, _ json.RawMessage) (any, error) {
				d, ok := ctx.Deadline()
				child, cancel := context.WithCancel(ctx)
				defer cancel()
				<-child.Done()
				got <- seen{deadline: d, ok: ok, err: ctx.Err(), child: child.Err(), cause: context.Cause(child), ended: time.Now()}
				return nil, ctx.Err()
			}))
		start := time.Now()
		if err := h.submit(context.Background(), "wait", 0); err != nil {
			t.Fatal(err)
		}
		s := <-got
		synctest.Wait()
		due := start.Add(2 * time.Second)
		if !s.ok || !s.deadline.Equal(due) {
			t.Errorf("Deadline() = %v, %v; want %v, true", s.deadline, s.ok, due)
		}
		if !s.ended.Equal(due) {
			t.Errorf("the context ended %v after admission, want 2s", s.ended.Sub(start))
		}
		if s.err != context.DeadlineExceeded || !errors.Is(s.cause, context.DeadlineExceeded) || s.child == nil {
			t.Errorf("Err() = %v; derived: Err() = %v, Cause() = %v; want %v, an error, %v", s.err, s.child, s.cause, context.DeadlineExceeded, context.DeadlineExceeded)
		}
		if a := h.onlyAnswer(0); a.code != protocol.CodeToolTimeout {
			t.Errorf("answer %+v, want -32001", a)
		}
		if since := time.Since(start); since != 2*time.Second {
			t.Errorf("answered %v after admission, want 2s", since)
		}
	})
}

// Hold waits its turn in the part's queue, keeps later calls waiting until release, and leaves the
// queue when its context ends first.
func TestQueueHold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{delay: time.Second}
		h := newHarness(t, Options{}, testTool(t, "arm", tools.Query, []string{"arm"}, rec.handler))
		if err := h.submit(context.Background(), "arm", 0); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		if _, err := h.d.acquire(ctx, []string{"arm"}); err == nil {
			t.Fatal("Hold got the arm while a call drove it")
		}
		held := make(chan func())
		go func() {
			release, err := h.d.acquire(context.Background(), []string{"arm", "arm"})
			if err != nil {
				t.Error(err)
			}
			held <- release
		}()
		synctest.Wait()
		if err := h.submit(context.Background(), "arm", 1); err != nil {
			t.Fatal(err)
		}
		release := <-held
		if !slices.Equal(rec.ran, []int{0}) {
			t.Fatalf("ran %v before the Hold was released, want [0]", rec.ran)
		}
		time.Sleep(5 * time.Second) // within the call's 10s timeout
		synctest.Wait()
		if _, ok := h.answers()[1]; ok {
			t.Error("a call ran while the arm was held")
		}
		release()
		release() // twice is harmless
		synctest.Wait()
		time.Sleep(time.Second)
		synctest.Wait()
		if a := h.onlyAnswer(1); a.result == "" {
			t.Errorf("the call after the Hold: %+v", a)
		}
	})
}

// A call whose asker left while it waited (the line closed) leaves the queue at once, without
// running, even behind a part that is busy for long.
func TestQueueDropsCancelledWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{delay: time.Hour}
		h := newHarness(t, Options{ToolTimeout: 2 * time.Hour}, testTool(t, "arm", tools.Query, []string{"arm"}, rec.handler))
		if err := h.submit(context.Background(), "arm", 0); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		if err := h.submit(ctx, "arm", 1); err != nil {
			t.Fatal(err)
		}
		if err := h.submit(ctx, "arm", 2); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		cancel()
		synctest.Wait()
		if _, ok := h.answers()[2]; !ok || time.Since(start) != 0 {
			t.Fatal("a waiting call was not dropped at once when its asker left")
		}
		time.Sleep(2 * time.Hour)
		synctest.Wait()
		if !slices.Equal(rec.ran, []int{0}) {
			t.Errorf("ran %v, want [0]: the cancelled call must not run", rec.ran)
		}
		for _, i := range []int{1, 2} {
			if a := h.onlyAnswer(i); a.code != protocol.CodeToolTimeout || a.msg != "call cancelled before it ran" {
				t.Errorf("cancelled call %d: %+v", i, a)
			}
		}
	})
}

// A drain may give up while calls run, and calls may be admitted after the count of running ones
// fell to zero during a drain: the dispatcher's idle signal must follow the count through both.
func TestDrainCountsCallsAdmittedDuringIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		h := newHarness(t, Options{MaxInFlight: 2}, testTool(t, "block", tools.Query, nil, func(ctx context.Context, _ json.RawMessage) (any, error) {
			<-release
			return "ok", nil
		}))
		short := func() bool {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
			defer cancel()
			return h.d.wait(ctx)
		}
		if !short() {
			t.Fatal("a dispatcher with no calls is not idle")
		}
		local := func(n int) *CallError {
			return h.d.submit(context.Background(), h.d.settings.Load(), "block", json.RawMessage(`{}`), ViaLocal, testReply{mu: &h.mu, got: h.got, n: n})
		}
		if err := local(100); err != nil {
			t.Fatal(err)
		}
		if short() {
			t.Fatal("wait reported idle with a call running")
		}
		release <- struct{}{}
		if !short() {
			t.Fatal("wait did not report idle once the call ended")
		}
		// Admitted after the count fell to zero, as a local call is while a drain waits.
		if err := local(101); err != nil {
			t.Fatal(err)
		}
		if short() {
			t.Fatal("wait reported idle with a call admitted after an idle moment")
		}
		release <- struct{}{}
		if !short() {
			t.Fatal("wait did not report idle once the second call ended")
		}
		h.d.stop()
		if err := h.submit(context.Background(), "block", 0); err == nil || err.Code != protocol.CodeBusy {
			t.Errorf("a stopping dispatcher admitted the server's call: %v", err)
		}
		if err := local(102); err != nil {
			t.Errorf("a stopping (not closed) dispatcher refused a local call: %v", err)
		}
		release <- struct{}{}
		h.d.close()
		if err := local(103); err == nil {
			t.Error("a closed dispatcher admitted a local call")
		}
	})
}

// Delay is the agent's rule with the defaults filled: never below Min, never above Max.
func TestBackoffDelay(t *testing.T) {
	b := Backoff{Min: time.Second, Max: 30 * time.Second}
	for attempt := range 40 {
		ceiling := min(30*time.Second, time.Second<<min(attempt+1, 31))
		for range 20 {
			if d := b.Delay(attempt); d < time.Second || d > ceiling {
				t.Fatalf("Delay(%d) = %v, want within [1s, %v]", attempt, d, ceiling)
			}
		}
	}
	if d := (Backoff{}).Delay(0); d < 500*time.Millisecond || d > time.Second {
		t.Errorf("zero Backoff Delay(0) = %v, want the defaults' [500ms, 1s]", d)
	}
}
