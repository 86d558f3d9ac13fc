package device_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/alsa"
	"github.com/devicectl/devicectl/hal/sim"
	"github.com/devicectl/devicectl/internal/testing/pulsetest"
	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
	"github.com/devicectl/devicectl/tools/builtin"
)

// These tests fire bursts of calls the way a server may (seed 002 lets it fire control calls
// without waiting for their answers): every frame written back to back on the raw line, in an
// order the test knows, then every answer read. docs/protocol.md, "Concurrency and order": nothing in a
// burst within the queue is refused, and calls on the same part run in the order they were sent,
// so the device ends in the state of the last call.

// wireAnswer is one response as the device sent it.
type wireAnswer struct {
	arrived int // its place among the burst's answers, from 0

	ID     string          `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (a wireAnswer) String() string {
	if a.Error != nil {
		return fmt.Sprintf("error %d %s", a.Error.Code, a.Error.Message)
	}
	return string(a.Result)
}

// served reports whether a is a result the tool (or the queue, superseding it) gave.
func (a wireAnswer) served() bool { return a.Error == nil && a.Result != nil }

func (a wireAnswer) superseded() bool {
	var r struct{ Status string }
	return a.served() && json.Unmarshal(a.Result, &r) == nil && r.Status == "superseded"
}

// burstCall is one execute of a burst.
type burstCall struct {
	tool, input string
}

var burstIDs struct {
	mu sync.Mutex
	n  int
}

// fire sends every call back to back, then reads one answer for each; it fails the test on an
// answer to no call or a second answer to one. The answers are in the calls' order.
func fire(t *testing.T, l *line, calls []burstCall) []wireAnswer {
	t.Helper()
	burstIDs.mu.Lock()
	base := burstIDs.n
	burstIDs.n += len(calls)
	burstIDs.mu.Unlock()
	index := make(map[string]int, len(calls))
	frames := make([]string, len(calls))
	for i, c := range calls {
		id := "b" + strconv.Itoa(base+i)
		index[id] = i
		frames[i] = fmt.Sprintf(`{"jsonrpc":"2.0","method":"mcp/tool/execute","params":{"tool_name":%q,"tool_input":%s},"id":%q}`, c.tool, c.input, id)
	}
	for _, f := range frames {
		l.send(websocket.MessageText, f)
	}
	answers := make([]wireAnswer, len(calls))
	seen := make([]bool, len(calls))
	for n := range calls {
		a := wireAnswer{arrived: n}
		if err := json.Unmarshal(l.recv(), &a); err != nil {
			t.Fatal(err)
		}
		i, ok := index[a.ID]
		if !ok || seen[i] {
			t.Fatalf("answer %s: to no call of the burst, or a second one", a)
		}
		seen[i] = true
		answers[i] = a
	}
	return answers
}

// levels and expressions to draw bursts from.
func randomLevel(r *rand.Rand) int { return r.IntN(101) }

func randomExpression(r *rand.Rand) hal.Expression {
	all := hal.Expressions()
	return all[r.IntN(len(all))]
}

// mixedBurst interleaves n volume and n expression calls (and a few status queries) in a random
// order, and returns it with the last level and expression sent.
func mixedBurst(r *rand.Rand, n int) (calls []burstCall, lastLevel int, lastExpr hal.Expression) {
	var vol, face []burstCall
	for range n {
		lastLevel = randomLevel(r)
		vol = append(vol, burstCall{"amplify_volume", fmt.Sprintf(`{"level":%d}`, lastLevel)})
		lastExpr = randomExpression(r)
		face = append(face, burstCall{"set_virtual_human_expression", fmt.Sprintf(`{"expression":%q}`, lastExpr)})
	}
	for len(vol)+len(face) > 0 {
		switch {
		case r.IntN(8) == 0:
			calls = append(calls, burstCall{"get_device_status", `{}`})
		case len(face) == 0 || (len(vol) > 0 && r.IntN(2) == 0):
			calls, vol = append(calls, vol[0]), vol[1:]
		default:
			calls, face = append(calls, face[0]), face[1:]
		}
	}
	return calls, lastLevel, lastExpr
}

// changes records what a part was set to, in order.
type changes[T comparable] struct {
	mu  sync.Mutex
	got []T
}

func (c *changes[T]) add(v T) {
	c.mu.Lock()
	c.got = append(c.got, v)
	c.mu.Unlock()
}

func (c *changes[T]) reset() []T {
	c.mu.Lock()
	defer c.mu.Unlock()
	got := c.got
	c.got = nil
	return got
}

// inOrder checks that applied, what a part was set to, follows sent, what the burst asked for: in
// order, some skipped (superseded), ending with the last.
func inOrder[T comparable](t *testing.T, what string, sent, applied []T) {
	t.Helper()
	i := 0
	for _, v := range applied {
		for i < len(sent) && sent[i] != v {
			i++
		}
		if i == len(sent) {
			t.Errorf("%s: applied %v, not in the order sent %v", what, applied, sent)
			return
		}
		i++
	}
	if len(applied) == 0 || len(sent) > 0 && applied[len(applied)-1] != sent[len(sent)-1] {
		t.Errorf("%s: applied %v, want it to end with the last sent of %v", what, applied, sent)
	}
}

// sentValues extracts the inputs of one tool from a burst, in order.
func sentValues(calls []burstCall, tool, field string) []string {
	var out []string
	for _, c := range calls {
		if c.tool != tool {
			continue
		}
		var m map[string]any
		json.Unmarshal([]byte(c.input), &m)
		out = append(out, fmt.Sprint(m[field]))
	}
	return out
}

func stringsOf[T any](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = fmt.Sprint(v)
	}
	return out
}

// checkBurst checks that every call of a burst was served, and that each part ended in the state
// of the last call sent to it, having gone through the others in order.
func checkBurst(t *testing.T, calls []burstCall, answers []wireAnswer, volumes *changes[int], faces *changes[hal.Expression]) {
	t.Helper()
	for i, a := range answers {
		if !a.served() {
			t.Errorf("call %d (%s %s) of the burst: %s, want a result", i, calls[i].tool, calls[i].input, a)
		}
	}
	inOrder(t, "speaker", sentValues(calls, "amplify_volume", "level"), stringsOf(volumes.reset()))
	inOrder(t, "face", sentValues(calls, "set_virtual_human_expression", "expression"), stringsOf(faces.reset()))
}

// A burst of control calls at every built-in tool ends in the state of the last call to each, and
// no call of it is refused: on the simulated parts, whether the calls run on workers or, the parts
// being instant, on the read loop when nothing is ahead of them; and on slow parts, each change
// taking up to 3ms.
func TestBurstEndsInLastState(t *testing.T) {
	for _, tc := range []struct {
		name string
		// parts are the speaker and face the registry's tools drive, reporting each change they
		// make to volumes and faces.
		parts         func(t *testing.T, volumes *changes[int], faces *changes[hal.Expression]) (hal.Speaker, hal.Face, *tools.Registry)
		seed          [2]uint64
		rounds, calls int
	}{
		{"instant=false", simParts(builtinRegistry), [2]uint64{1, 2}, 20, 12},
		{"instant=true", simParts(instantRegistry), [2]uint64{1, 2}, 20, 12},
		{"slow parts", slowParts, [2]uint64{5, 6}, 5, 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkLeaks(t)
			var volumes changes[int]
			var faces changes[hal.Expression]
			speaker, face, reg := tc.parts(t, &volumes, &faces)
			l := registeredLine(t, device.Options{Registry: reg})
			r := rand.New(rand.NewPCG(tc.seed[0], tc.seed[1]))
			for round := range tc.rounds {
				calls, level, expr := mixedBurst(r, tc.calls)
				answers := fire(t, l, calls)
				checkBurst(t, calls, answers, &volumes, &faces)
				v, _ := speaker.Volume(context.Background())
				e, _ := face.Expression(context.Background())
				if v != level || e != expr {
					t.Errorf("round %d: the device ended at volume %d, face %s; the last calls sent %d, %s", round, v, e, level, expr)
				}
				// And the device says so itself.
				status := fire(t, l, []burstCall{{"get_device_status", `{}`}})[0]
				var st struct {
					Volume     int
					Expression hal.Expression
				}
				if err := json.Unmarshal(status.Result, &st); err != nil || st.Volume != level || st.Expression != expr {
					t.Errorf("round %d: get_device_status = %s, want volume %d and expression %s", round, status, level, expr)
				}
			}
		})
	}
}

// simParts returns the simulated parts with the registry that registry makes of them.
func simParts(registry func(*testing.T, hal.Speaker, hal.Face) *tools.Registry) func(*testing.T, *changes[int], *changes[hal.Expression]) (hal.Speaker, hal.Face, *tools.Registry) {
	return func(t *testing.T, volumes *changes[int], faces *changes[hal.Expression]) (hal.Speaker, hal.Face, *tools.Registry) {
		speaker := sim.NewSpeaker(&sim.SpeakerOptions{OnChange: volumes.add})
		face := sim.NewFace(&sim.FaceOptions{OnChange: faces.add})
		return speaker, face, registry(t, speaker, face)
	}
}

// slowParts returns slowSpeaker and slowFace with the built-in tools on them.
func slowParts(t *testing.T, volumes *changes[int], faces *changes[hal.Expression]) (hal.Speaker, hal.Face, *tools.Registry) {
	speaker := slowSpeaker{sim.NewSpeaker(nil), jitter(3, 3*time.Millisecond), volumes}
	face := slowFace{sim.NewFace(nil), jitter(4, 3*time.Millisecond), faces}
	return speaker, face, builtinRegistry(t, speaker, face)
}

// builtinRegistry is the built-in tools on the given parts.
func builtinRegistry(t *testing.T, speaker hal.Speaker, face hal.Face) *tools.Registry {
	t.Helper()
	reg := tools.NewRegistry()
	if err := builtin.Register(reg, &builtin.Options{Speaker: speaker, Face: face, Language: "en"}); err != nil {
		t.Fatal(err)
	}
	return reg
}

// instantRegistry is builtinRegistry with the parts declared instant, so that calls may run inline.
func instantRegistry(t *testing.T, speaker hal.Speaker, face hal.Face) *tools.Registry {
	t.Helper()
	reg := tools.NewRegistry()
	if err := builtin.Register(reg, &builtin.Options{Speaker: speaker, Face: face, Language: "en", Instant: true}); err != nil {
		t.Fatal(err)
	}
	for _, tl := range reg.Tools() {
		if !tl.Inline {
			t.Fatalf("%s is not Inline on instant parts", tl.Name)
		}
	}
	return reg
}

// slowSpeaker and slowFace are parts that take a while, different each time, for every change:
// calls run long enough to pile up, and would finish out of order if they overlapped.
type slowSpeaker struct {
	*sim.Speaker
	r  func() time.Duration
	on *changes[int]
}

func (s slowSpeaker) SetVolume(ctx context.Context, level int) error {
	time.Sleep(s.r())
	if err := s.Speaker.SetVolume(ctx, level); err != nil {
		return err
	}
	s.on.add(level)
	return nil
}

type slowFace struct {
	*sim.Face
	r  func() time.Duration
	on *changes[hal.Expression]
}

func (f slowFace) SetExpression(ctx context.Context, e hal.Expression) error {
	time.Sleep(f.r())
	if err := f.Face.SetExpression(ctx, e); err != nil {
		return err
	}
	f.on.add(e)
	return nil
}

// jitter returns a random duration up to most, safe for concurrent use.
func jitter(seed uint64, most time.Duration) func() time.Duration {
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(seed, seed))
	return func() time.Duration {
		mu.Lock()
		defer mu.Unlock()
		return time.Duration(r.Int64N(int64(most)))
	}
}

// A burst of 200 calls is answered 200 times, with results: the queries by the tool, and of the
// control calls the last by the tool and the others by it or as superseded.
func TestBurstOf200AnsweredWithResults(t *testing.T) {
	for _, instant := range []bool{false, true} {
		t.Run(fmt.Sprintf("instant=%v", instant), func(t *testing.T) { testBurstOf200AnsweredWithResults(t, instant) })
	}
}

func testBurstOf200AnsweredWithResults(t *testing.T, instant bool) {
	checkLeaks(t)
	speaker, face := sim.NewSpeaker(nil), sim.NewFace(nil)
	reg := builtinRegistry(t, speaker, face)
	if instant {
		reg = instantRegistry(t, speaker, face)
	}
	l := registeredLine(t, device.Options{Registry: reg})
	for _, tool := range []string{"get_device_status", "amplify_volume"} {
		calls := make([]burstCall, 200)
		for i := range calls {
			calls[i] = burstCall{tool, `{}`}
			if tool == "amplify_volume" {
				calls[i].input = fmt.Sprintf(`{"level":%d}`, i%101)
			}
		}
		answers := fire(t, l, calls)
		served, superseded := 0, 0
		for i, a := range answers {
			if a.served() {
				served++
			}
			switch {
			case !a.served():
				t.Errorf("%s call %d of 200: %s, want a result", tool, i, a)
			case a.superseded():
				superseded++
				if tool != "amplify_volume" {
					t.Errorf("query %d answered superseded: %s", i, a)
				}
			}
		}
		if answers[len(answers)-1].superseded() {
			t.Errorf("the last %s call was superseded", tool)
		}
		t.Logf("%s: %d of 200 answered with results, %d of them superseded", tool, served, superseded)
	}
	if v, _ := speaker.Volume(context.Background()); v != 199%101 {
		t.Errorf("volume after 200 calls = %d, want the last one's %d", v, 199%101)
	}
}

// gatedSpeaker holds its first SetVolume until the test opens the gate.
type gatedSpeaker struct {
	*sim.Speaker
	entered, gate chan struct{}
	once          *sync.Once
}

func (s gatedSpeaker) SetVolume(ctx context.Context, level int) error {
	s.once.Do(func() {
		close(s.entered)
		<-s.gate
	})
	return s.Speaker.SetVolume(ctx, level)
}

// Control calls waiting behind a busy part are superseded by a later call to the same tool, and
// answered so; a call to another tool on the part between them keeps the earlier one.
func TestBurstSupersededAnswers(t *testing.T) {
	checkLeaks(t)
	speaker := gatedSpeaker{sim.NewSpeaker(nil), make(chan struct{}), make(chan struct{}), new(sync.Once)}
	l := registeredLine(t, device.Options{Registry: builtinRegistry(t, speaker, sim.NewFace(nil))})
	calls := []burstCall{
		{"amplify_volume", `{"level":1}`}, // runs, held at the gate
		{"amplify_volume", `{"level":2}`}, // superseded by 3
		{"amplify_volume", `{"level":3}`}, // kept: the status query comes next on the speaker
		{"get_device_status", `{}`},       // reads 3
		{"amplify_volume", `{"level":4}`}, // superseded by 5
		{"amplify_volume", `{"level":5}`},
	}
	for i, c := range calls {
		l.send(websocket.MessageText, fmt.Sprintf(`{"jsonrpc":"2.0","method":"mcp/tool/execute","params":{"tool_name":%q,"tool_input":%s},"id":"s%d"}`, c.tool, c.input, i))
	}
	answers := make(map[string]wireAnswer)
	read := func() string {
		var a wireAnswer
		if err := json.Unmarshal(l.recv(), &a); err != nil {
			t.Fatal(err)
		}
		if _, dup := answers[a.ID]; dup {
			t.Fatalf("%s answered twice", a.ID)
		}
		answers[a.ID] = a
		return a.ID
	}
	// The superseded calls are answered as soon as the call replacing them arrives, while the
	// first still holds the speaker: before the gate opens.
	var open sync.Once
	openGate := func() { open.Do(func() { close(speaker.gate) }) }
	defer openGate() // on a failure too, so the agent can stop
	<-speaker.entered
	if first, second := read(), read(); first != "s1" || second != "s4" {
		t.Fatalf("answered %s then %s while the speaker was held, want s1 and s4", first, second)
	}
	openGate()
	for range 4 {
		read()
	}
	for i, want := range []string{"success", "superseded", "success", "success", "superseded", "success"} {
		a := answers["s"+strconv.Itoa(i)]
		var r struct{ Status string }
		if !a.served() || json.Unmarshal(a.Result, &r) != nil || r.Status != want {
			t.Errorf("call %d (%s): %s, want status %s", i, calls[i].input, a, want)
		}
	}
	var st struct{ Volume int }
	if json.Unmarshal(answers["s3"].Result, &st); st.Volume != 3 {
		t.Errorf("the status between the calls read volume %d, want 3", st.Volume)
	}
	if v, _ := speaker.Volume(context.Background()); v != 5 {
		t.Errorf("volume = %d, want 5", v)
	}
}

// hungFace never returns from SetExpression until the test lets it, whatever its context says: a
// wedged face program.
type hungFace struct {
	*sim.Face
	unhang chan struct{}
}

func (f hungFace) SetExpression(ctx context.Context, e hal.Expression) error {
	<-f.unhang
	return f.Face.SetExpression(ctx, e)
}

// A hung face holds up only the face's calls: a burst of volume calls behind them is served, none
// busy, and the face calls are answered -32001 at their timeout. (A call on the face and the
// speaker, get_device_status, would keep its place in both queues, and hold the speaker's calls
// behind it until its own timeout: order over speed.)
func TestBurstHungPartHoldsOnlyItsQueue(t *testing.T) {
	checkLeaks(t)
	face := hungFace{sim.NewFace(nil), make(chan struct{})}
	defer close(face.unhang)
	speaker := sim.NewSpeaker(nil)
	l := registeredLine(t, device.Options{Registry: builtinRegistry(t, speaker, face), ToolTimeout: time.Second})
	var calls []burstCall
	for _, e := range []string{"smile", "cry", "amazed", "idle", "smile", "cry", "amazed", "idle", "smile", "cry"} {
		calls = append(calls, burstCall{"set_virtual_human_expression", fmt.Sprintf(`{"expression":%q}`, e)})
	}
	for i := range 30 {
		calls = append(calls, burstCall{"amplify_volume", fmt.Sprintf(`{"level":%d}`, i)})
	}
	start := time.Now()
	answers := fire(t, l, calls)
	// The first face call hangs and the last waits behind it: both end at their timeout. Those
	// between may be superseded, each by the next.
	for i, a := range answers[:10] {
		timedOut := a.Error != nil && a.Error.Code == protocol.CodeToolTimeout
		if !timedOut && (i == 0 || i == 9 || !a.superseded()) {
			t.Errorf("face call %d: %s, want -32001 or (not the first or last) superseded", i, a)
		}
	}
	for i, a := range answers[10:] {
		if !a.served() {
			t.Errorf("volume call %d behind a hung face: %s, want a result", i, a)
		}
		if a.arrived > answers[0].arrived {
			t.Errorf("volume call %d was answered after the hung face call timed out", i)
		}
	}
	if v, _ := speaker.Volume(context.Background()); v != 29 {
		t.Errorf("volume = %d, want the last call's 29", v)
	}
	t.Logf("burst answered in %v", time.Since(start))
}

// Against real PulseAudio, through the alsa backend (an amixer process per change): volume calls
// fired back to back leave the sink at the last level sent. Needs pulseaudio and alsa-utils with
// ALSA's pulse plugin (libasound2-plugins); DEVICECTL_REQUIRE_HW=1 fails instead of skipping.
func TestBurstPulseEndsAtLastLevel(t *testing.T) {
	checkLeaks(t)
	amixer := pulsetest.Need(t, "amixer", "alsa-utils")
	srv := pulsetest.Start(t)
	if out, err := exec.Command(amixer, "-D", "pulse", "sget", "Master").CombinedOutput(); err != nil {
		if strings.Contains(string(out), "CTL pulse") || strings.Contains(string(out), "_pulse.so") {
			pulsetest.Unavailable(t, "libasound2-plugins", "ALSA has no pulse plugin: %s", out)
		}
		t.Fatalf("amixer -D pulse sget Master: %v\n%s\ndaemon log:\n%s", err, out, srv.Log())
	}
	ctx := context.Background()
	speaker, err := alsa.New(ctx, &alsa.Options{Device: "pulse", Control: "Master"})
	if err != nil {
		t.Fatal(err)
	}
	l := registeredLine(t, device.Options{Registry: builtinRegistry(t, speaker, sim.NewFace(nil))})
	r := rand.New(rand.NewPCG(7, 8))
	percent := regexp.MustCompile(`\[(\d+)%\]`)
	for round := range 3 {
		calls := make([]burstCall, 16)
		var last int
		for i := range calls {
			last = randomLevel(r)
			calls[i] = burstCall{"amplify_volume", fmt.Sprintf(`{"level":%d}`, last)}
		}
		for i, a := range fire(t, l, calls) {
			if !a.served() {
				t.Errorf("round %d, call %d: %s, want a result", round, i, a)
			}
		}
		// Read the sink's volume with amixer directly, not through the backend.
		out, err := exec.Command(amixer, "-D", "pulse", "sget", "Master").Output()
		if err != nil {
			t.Fatal(err)
		}
		m := percent.FindSubmatch(out)
		if m == nil || string(m[1]) != strconv.Itoa(last) {
			t.Errorf("round %d: after the burst amixer shows\n%s\nwant the last level sent, %d%%", round, out, last)
		}
	}
}
