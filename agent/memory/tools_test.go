package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/agent/store"
	"github.com/devicectl/devicectl/agent/store/storetest"
	"github.com/devicectl/devicectl/tools"
)

// newTools registers the tools on a store on the database where names; "" is a SQLite one.
func newTools(t *testing.T, where string) *tools.Registry {
	t.Helper()
	if where == "" {
		where = storetest.Where(t, store.SQLite)
	}
	s, _ := newStore(t, where)
	r := tools.NewRegistry()
	if err := RegisterTools(r, s); err != nil {
		t.Fatal(err)
	}
	return r
}

// call runs a tool as the agent does: validate, invoke, marshal.
func call(t *testing.T, r *tools.Registry, name, input string) (string, error) {
	t.Helper()
	p, err := r.Prepare(name, json.RawMessage(input))
	if err != nil {
		return "", err
	}
	out, err := p.Invoke(context.Background())
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatalf("%s: result does not marshal: %v", name, err)
	}
	return string(b), nil
}

func mustCall(t *testing.T, r *tools.Registry, name, input string) string {
	t.Helper()
	out, err := call(t, r, name, input)
	if err != nil {
		t.Fatalf("%s %s: %v", name, input, err)
	}
	return out
}

func TestToolsDeclared(t *testing.T) {
	r := newTools(t, "")
	var names []string
	for _, d := range r.Declarations() {
		names = append(names, d.Name)
		if d.MainType != tools.Local || d.SubType != tools.Query {
			t.Errorf("%s: main_type %s, sub_type %s; want local, query", d.Name, d.MainType, d.SubType)
		}
	}
	if got := strings.Join(names, " "); got != "add_user_memory search_user_memories delete_user_memory" {
		t.Errorf("tools %s", got)
	}
	if err := RegisterTools(r, nil); err == nil {
		t.Error("RegisterTools with a nil store succeeded")
	}
	s, _ := newStore(t, storetest.Where(t, store.SQLite))
	if err := RegisterTools(r, s); err == nil || !strings.Contains(err.Error(), "already registered") {
		t.Errorf("registering twice: %v", err)
	}
}

// The seed's three calls, with its input and output shapes.
func TestToolsSeedShapes(t *testing.T) {
	storetest.Each(t, toolsSeedShapes)
}

func toolsSeedShapes(t *testing.T, where string) {
	r := newTools(t, where)
	id := mustCall(t, r, "add_user_memory", `{"content":"用户喜欢科技相关话题","user_id":"user-123","topics":["兴趣","偏好","科技"]}`)
	if !regexp.MustCompile(`^"memory-[1-9][0-9]*"$`).MatchString(id) {
		t.Fatalf("add_user_memory = %s; want a JSON string memory-<n>", id)
	}
	mustCall(t, r, "add_user_memory", `{"content":"用户住在上海","user_id":"user-123"}`) // topics are optional

	got := mustCall(t, r, "search_user_memories", `{"query":"用户对什么话题感兴趣","user_id":"user-123","limit":5}`)
	want := regexp.MustCompile(`^\[\{"id":` + regexp.QuoteMeta(id) + `,"memory":"用户喜欢科技相关话题","topics":\["兴趣","偏好","科技"\],"relevance":(0\.[0-9]{1,3}|1)\},` +
		`\{"id":"memory-[0-9]+","memory":"用户住在上海","topics":\[\],"relevance":0\.[0-9]{1,3}\}\]$`)
	if !want.MatchString(got) {
		t.Errorf("search_user_memories =\n%s\nwant it to match\n%s", got, want)
	}
	var hits []Hit
	if err := json.Unmarshal([]byte(got), &hits); err != nil || hits[0].Relevance <= hits[1].Relevance {
		t.Errorf("relevances not best first: %s (%v)", got, err)
	}

	if got := mustCall(t, r, "search_user_memories", `{"query":"苹果","user_id":"user-123"}`); got != `[]` {
		t.Errorf("no match: %s; want []", got)
	}
	if got := mustCall(t, r, "delete_user_memory", `{"user_id":"user-123","memory_id":`+id+`}`); got != `true` {
		t.Errorf("delete_user_memory = %s; want true", got)
	}
	if got := mustCall(t, r, "delete_user_memory", `{"user_id":"user-123","memory_id":`+id+`}`); got != `false` {
		t.Errorf("second delete_user_memory = %s; want false", got)
	}
	if got := mustCall(t, r, "delete_user_memory", `{"user_id":"user-123","memory_id":"memory-456"}`); got != `false` {
		t.Errorf("delete_user_memory of an unknown id = %s; want false", got)
	}
}

func TestToolsDefaultLimit(t *testing.T) {
	r := newTools(t, "")
	for i := range 8 {
		mustCall(t, r, "add_user_memory", fmt.Sprintf(`{"content":"水果%d","user_id":"u"}`, i))
	}
	var hits []Hit
	if err := json.Unmarshal([]byte(mustCall(t, r, "search_user_memories", `{"query":"水果","user_id":"u"}`)), &hits); err != nil {
		t.Fatal(err)
	}
	if len(hits) != DefaultLimit {
		t.Errorf("%d hits without a limit; want %d", len(hits), DefaultLimit)
	}
}

func TestToolsRefuseBadInput(t *testing.T) {
	r := newTools(t, "")
	long := strings.Repeat("长", MaxContentRunes+1)
	many := `["a","b","c","d","e","f","g","h","i","j","k","l","m","n","o","p","q"]`
	for _, tc := range []struct{ tool, input, details string }{
		{"search_user_memories", `{"user_id":"u"}`, `tool_input: missing required property "query"`},
		{"search_user_memories", `{"query":"x","user_id":"u","limit":51}`, `tool_input.limit: 51 is greater than the maximum 50`},
		{"search_user_memories", `{"query":"x","user_id":"u","limit":0}`, `tool_input.limit: 0 is less than the minimum 1`},
		{"search_user_memories", `{"query":"","user_id":"u"}`, `tool_input.query: "" is shorter than the minimum length 1`},
		{"add_user_memory", `{"content":"` + long + `","user_id":"u"}`, `tool_input.content: `},
		{"add_user_memory", `{"content":"x","user_id":"u","topics":` + many + `}`, `tool_input.topics: has 17 items, more than the maximum 16`},
		{"add_user_memory", `{"content":"x","user_id":""}`, `tool_input.user_id: "" is shorter than the minimum length 1`},
		{"add_user_memory", `{"content":"x","user":"u"}`, `tool_input: `},
		{"delete_user_memory", `{"user_id":"u"}`, `tool_input: missing required property "memory_id"`},
	} {
		_, err := call(t, r, tc.tool, tc.input)
		var pe *tools.ParamsError
		if !errors.As(err, &pe) || !strings.HasPrefix(pe.Details, tc.details) {
			t.Errorf("%s %.60s: %v; want a ParamsError starting %q", tc.tool, tc.input, err, tc.details)
		}
	}
	if _, err := call(t, r, "add_user_memory", `{"content":"   ","user_id":"u"}`); !errors.Is(err, ErrInvalid) {
		t.Errorf("blank content: %v; want ErrInvalid from the store", err)
	}
}

func TestRoundRelevance(t *testing.T) {
	for in, want := range map[float64]float64{0: 0, 0.00001: 0.001, 0.12345: 0.123, 0.9996: 1, 1: 1} {
		if got := roundRelevance(in); got != want {
			t.Errorf("roundRelevance(%v) = %v; want %v", in, got, want)
		}
	}
}
