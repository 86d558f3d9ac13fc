package rules

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/agent/localtools"
	"github.com/devicectl/devicectl/agent/memory"
	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/sim"
	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
	"github.com/devicectl/devicectl/tools/builtin"
)

// world is a device (the real built-in tools over simulated hardware) plus fakes of the
// server's local tools, with the schemas seed 004 gives them.
type world struct {
	spk  *sim.Speaker
	face *sim.Face
	reg  *tools.Registry
	mem  *fakeMemory
	// web answers search_web; nil answers the error a server without a backend gives.
	web func(query string) ([]map[string]any, error)
}

func newWorld(t testing.TB) *world {
	t.Helper()
	w := &world{
		spk:  sim.NewSpeaker(&sim.SpeakerOptions{Volume: 40}),
		face: sim.NewFace(nil),
		reg:  tools.NewRegistry(),
		mem:  &fakeMemory{},
	}
	err := builtin.Register(w.reg, &builtin.Options{
		Speaker: w.spk, Face: w.face, Language: "en", Version: "test",
		Start: time.Now(), ConnState: func() string { return "registered" },
	})
	if err != nil {
		t.Fatal(err)
	}
	local := []*tools.Tool{
		mustFunc(t, localtools.ToolCalculate, tools.Query, func(_ context.Context, in struct {
			Expression string `json:"expression"`
		}) (map[string]any, error) {
			v, err := evalArith(in.Expression)
			if err != nil {
				return nil, err
			}
			return map[string]any{"result": v}, nil
		}),
		mustFunc(t, localtools.ToolSearch, tools.Query, func(_ context.Context, in struct {
			Query string `json:"query"`
		}) ([]map[string]any, error) {
			if w.web == nil {
				return nil, errors.New("search_web: no search backend is configured")
			}
			return w.web(in.Query)
		}),
		mustFunc(t, memory.ToolAdd, tools.Control, func(_ context.Context, in struct {
			Content string   `json:"content"`
			UserID  string   `json:"user_id"`
			Topics  []string `json:"topics"`
		}) (string, error) {
			return w.mem.add(in.UserID, in.Content), nil
		}),
		mustFunc(t, memory.ToolSearch, tools.Query, func(_ context.Context, in struct {
			Query  string `json:"query"`
			UserID string `json:"user_id"`
			Limit  int    `json:"limit" tool:"min=1,max=50"`
		}) ([]map[string]any, error) {
			return w.mem.search(in.UserID, in.Query, in.Limit), nil
		}),
		mustFunc(t, memory.ToolDelete, tools.Control, func(_ context.Context, in struct {
			UserID   string `json:"user_id"`
			MemoryID string `json:"memory_id"`
		}) (bool, error) {
			return w.mem.delete(in.UserID, in.MemoryID), nil
		}),
	}
	for _, tool := range local {
		tool.MainType = tools.Local
		if err := w.reg.Add(tool); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func mustFunc[In, Out any](t testing.TB, name string, sub tools.SubType, fn func(context.Context, In) (Out, error)) *tools.Tool {
	t.Helper()
	tool, err := tools.Func(tools.Declaration{Name: name, Description: name + " (test)", MainType: tools.Local, SubType: sub}, fn)
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// call is one tool call a fake turn saw.
type call struct {
	Name  string
	Input string
}

func (c call) String() string { return c.Name + " " + c.Input }

// fakeTurn is an agent.TurnContext over a world. It validates every input against the tool's
// schema and runs the tool, as the agent does, and records the calls and the chunks.
type fakeTurn struct {
	tb    testing.TB
	req   agent.Request
	w     *world
	decls []tools.Declaration
	// override answers a tool instead of running it; nil runs it.
	override map[string]func(input json.RawMessage) (json.RawMessage, error)
	// fakeSuccess answers control tools {"status":"success"} at once, as the agent does by
	// default, after validating (and still running them, so the world changes).
	fakeSuccess bool

	mu      sync.Mutex
	calls   []call
	chunks  []string
	invalid []string // calls whose input failed the schema, or tools not listed
}

// newTurn lists the world's tools, or only those named.
func (w *world) turn(tb testing.TB, text string, only ...string) *fakeTurn {
	var ds []tools.Declaration
	for _, d := range w.reg.Declarations() {
		if only == nil || slices.Contains(only, d.Name) {
			ds = append(ds, d)
		}
	}
	return &fakeTurn{tb: tb, req: agent.Request{Text: text, SessionID: "s1", UserID: "u1"}, w: w, decls: ds}
}

func (f *fakeTurn) Request() agent.Request     { return f.req }
func (f *fakeTurn) History() []agent.Exchange  { return nil }
func (f *fakeTurn) Tools() []tools.Declaration { return f.decls }
func (f *fakeTurn) Thought(string)             {}
func (f *fakeTurn) Chunk(text string)          { f.mu.Lock(); f.chunks = append(f.chunks, text); f.mu.Unlock() }
func (f *fakeTurn) reply() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.chunks, "")
}
func (f *fakeTurn) recorded() []call { f.mu.Lock(); defer f.mu.Unlock(); return slices.Clone(f.calls) }
func (f *fakeTurn) problems() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.invalid)
}
func (f *fakeTurn) listed(name string) bool {
	return slices.ContainsFunc(f.decls, func(d tools.Declaration) bool { return d.Name == name })
}
func (f *fakeTurn) flag(format string, a ...any) {
	f.mu.Lock()
	f.invalid = append(f.invalid, fmt.Sprintf(format, a...))
	f.mu.Unlock()
}

func (f *fakeTurn) Call(ctx context.Context, name string, input json.RawMessage) (json.RawMessage, error) {
	f.mu.Lock()
	f.calls = append(f.calls, call{name, string(input)})
	f.mu.Unlock()
	if !f.listed(name) {
		f.flag("called %s, which Tools() does not list", name)
		return nil, &agent.ToolError{Code: protocol.CodeInvalidParams, Message: "Invalid params", Details: "unknown tool " + name}
	}
	p, err := f.w.reg.Prepare(name, input)
	if err != nil {
		f.flag("%s %s: %v", name, input, err)
		var pe *tools.ParamsError
		if errors.As(err, &pe) {
			return nil, &agent.ToolError{Code: protocol.CodeInvalidParams, Message: "Invalid params", Details: pe.Details}
		}
		return nil, err
	}
	if o := f.override[name]; o != nil {
		return o(input)
	}
	out, err := p.Invoke(ctx)
	if err != nil {
		return nil, &agent.ToolError{Code: protocol.CodeServerError, Message: "Tool execution failed", Details: err.Error()}
	}
	if f.fakeSuccess && p.Tool.SubType == tools.Control && p.Tool.MainType == tools.Remote {
		return json.RawMessage(`{"status":"success"}`), nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	return b, nil
}

var _ agent.TurnContext = (*fakeTurn)(nil)

// fakeMemory is a per-user memory store that ranks by the share of the query's characters
// (Chinese) or words (English) a memory contains.
type fakeMemory struct {
	mu   sync.Mutex
	next int
	mems []fakeMem
}

type fakeMem struct{ id, user, content string }

func (m *fakeMemory) add(user, content string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.next++
	id := "memory-" + strconv.Itoa(m.next)
	m.mems = append(m.mems, fakeMem{id, user, content})
	return id
}

func (m *fakeMemory) search(user, query string, limit int) []map[string]any {
	m.mu.Lock()
	defer m.mu.Unlock()
	terms := strings.Fields(strings.ToLower(query))
	if isChinese(query) {
		terms = nil
		for _, r := range query {
			if r != ' ' {
				terms = append(terms, string(r))
			}
		}
	}
	var out []map[string]any
	for _, mem := range m.mems {
		if mem.user != user {
			continue
		}
		hits := 0
		for _, term := range terms {
			if strings.Contains(strings.ToLower(mem.content), term) {
				hits++
			}
		}
		if hits > 0 {
			out = append(out, map[string]any{"id": mem.id, "memory": mem.content, "topics": []string{},
				"relevance": float64(hits) / float64(len(terms))})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i]["relevance"].(float64) > out[j]["relevance"].(float64) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

func (m *fakeMemory) delete(user, id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, mem := range m.mems {
		if mem.id == id && mem.user == user {
			m.mems = slices.Delete(m.mems, i, i+1)
			return true
		}
	}
	return false
}

func (m *fakeMemory) contents() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, mem := range m.mems {
		out = append(out, mem.content)
	}
	return out
}

// evalArith evaluates + - * / and parentheses, for the fake calculate tool.
func evalArith(s string) (float64, error) {
	p := &arithParser{s: strings.ReplaceAll(s, " ", "")}
	v, err := p.sum()
	if err == nil && p.i != len(p.s) {
		err = fmt.Errorf("unexpected %q", p.s[p.i:])
	}
	return v, err
}

type arithParser struct {
	s string
	i int
}

func (p *arithParser) sum() (float64, error) {
	v, err := p.product()
	for err == nil && p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
		op := p.s[p.i]
		p.i++
		var w float64
		if w, err = p.product(); op == '+' {
			v += w
		} else {
			v -= w
		}
	}
	return v, err
}

func (p *arithParser) product() (float64, error) {
	v, err := p.unary()
	for err == nil && p.i < len(p.s) && (p.s[p.i] == '*' || p.s[p.i] == '/') {
		op := p.s[p.i]
		p.i++
		var w float64
		if w, err = p.unary(); err == nil && op == '*' {
			v *= w
		} else if err == nil {
			if w == 0 {
				return 0, errors.New("division by zero")
			}
			v /= w
		}
	}
	return v, err
}

func (p *arithParser) unary() (float64, error) {
	if p.i < len(p.s) && p.s[p.i] == '-' {
		p.i++
		v, err := p.unary()
		return -v, err
	}
	if p.i < len(p.s) && p.s[p.i] == '(' {
		p.i++
		v, err := p.sum()
		if err == nil && (p.i >= len(p.s) || p.s[p.i] != ')') {
			return 0, errors.New("missing )")
		}
		p.i++
		return v, err
	}
	j := p.i
	for j < len(p.s) && (p.s[j] >= '0' && p.s[j] <= '9' || p.s[j] == '.') {
		j++
	}
	v, err := strconv.ParseFloat(p.s[p.i:j], 64)
	p.i = j
	return v, err
}

// plan runs one turn of p over the fake and fails the test on any call the planner should
// not have made.
func plan(t testing.TB, p *Planner, f *fakeTurn) error {
	t.Helper()
	err := p.Plan(context.Background(), f)
	for _, pr := range f.problems() {
		t.Errorf("%q: %s", f.req.Text, pr)
	}
	return err
}

var _ hal.Speaker = (*sim.Speaker)(nil)
