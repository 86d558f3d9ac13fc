package localtools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/tools"
)

// call runs a tool as the agent does: validate against the schema, invoke,
// marshal the result.
func call(t *testing.T, r *tools.Registry, name, input string) (string, error) {
	t.Helper()
	p, err := r.Prepare(name, json.RawMessage(input))
	if err != nil {
		return "", err
	}
	res, err := p.Invoke(context.Background())
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatalf("%s: result does not marshal: %v", name, err)
	}
	return string(b), nil
}

func newRegistry(t *testing.T, o *Options) *tools.Registry {
	t.Helper()
	r := tools.NewRegistry()
	if err := Register(r, o); err != nil {
		t.Fatalf("Register: %v", err)
	}
	return r
}

func TestRegister(t *testing.T) {
	r := newRegistry(t, nil)
	var names []string
	for _, d := range r.Declarations() {
		names = append(names, d.Name)
		if d.MainType != tools.Local || d.SubType != tools.Query {
			t.Errorf("%s: main_type %s, sub_type %s; want local, query", d.Name, d.MainType, d.SubType)
		}
		if len(d.Description) < 80 {
			t.Errorf("%s: description %q is too thin for a model to decide from", d.Name, d.Description)
		}
		required := d.Parameters.Required
		if len(required) == 0 {
			t.Errorf("%s: no required parameters", d.Name)
		}
		for _, p := range required {
			if s := d.Parameters.Properties[p]; s == nil || s.Description == "" {
				t.Errorf("%s: required parameter %q has no description", d.Name, p)
			}
		}
	}
	if got, want := strings.Join(names, ","), "calculate,guide_user_detail,split_query_to_dimension,search_web"; got != want {
		t.Errorf("tools = %s, want %s", got, want)
	}

	// A second Register adds nothing and says which name is taken.
	before := len(r.Tools())
	err := Register(r, nil)
	if err == nil || !strings.Contains(err.Error(), `"calculate" is already registered`) {
		t.Errorf("second Register: %v", err)
	}
	if len(r.Tools()) != before {
		t.Errorf("second Register added tools")
	}
	if err := Register(nil, nil); err == nil {
		t.Error("Register(nil) succeeded")
	}
}

func TestRegisterDoesNotModifyOptions(t *testing.T) {
	o := &Options{}
	newRegistry(t, o)
	if o.Logger != nil || o.Search != nil {
		t.Errorf("Register filled the caller's options: %+v", o)
	}
}

func TestToolsThroughRegistry(t *testing.T) {
	r := newRegistry(t, nil)
	tests := []struct {
		name, input, want string
	}{
		{"calculate", `{"expression":"add 5 and 10"}`, `{"result":15,"operation":"add","numbers":[5,10]}`},
		{"calculate", `{"expression":"3*(4+5)"}`, `{"result":27,"operation":"expression","numbers":[3,4,5]}`},
		{"calculate", `{"expression":"5加10"}`, `{"result":15,"operation":"add","numbers":[5,10]}`},
		{"calculate", `{"expression":"7/2"}`, `{"result":3.5,"operation":"divide","numbers":[7,2]}`},
		{"split_query_to_dimension", `{"query":"人工智能"}`, ""},
		{"guide_user_detail", `{"query":"人工智能"}`, ""},
	}
	for _, tt := range tests {
		got, err := call(t, r, tt.name, tt.input)
		if err != nil {
			t.Errorf("%s %s: %v", tt.name, tt.input, err)
			continue
		}
		if tt.want != "" && got != tt.want {
			t.Errorf("%s %s = %s, want %s", tt.name, tt.input, got, tt.want)
		}
	}
}

func TestToolInputRefused(t *testing.T) {
	r := newRegistry(t, nil)
	tests := []struct {
		name, input, details string
	}{
		{"calculate", `{}`, `missing required property "expression"`},
		{"calculate", `{"expression":5}`, "tool_input.expression"},
		{"calculate", `{"expression":""}`, "tool_input.expression"},
		{"calculate", `{"expression":"` + strings.Repeat("1", MaxExpressionLen+1) + `"}`, "tool_input.expression"},
		{"calculate", `{"expression":"1","extra":1}`, `unknown property "extra"`},
		{"guide_user_detail", `{}`, `missing required property "query"`},
		{"split_query_to_dimension", `{"query":null}`, "tool_input.query"},
		{"search_web", `{"query":"x","limit":0}`, "tool_input.limit"},
		{"search_web", `{"query":"x","limit":21}`, "tool_input.limit"},
	}
	for _, tt := range tests {
		_, err := call(t, r, tt.name, tt.input)
		var pe *tools.ParamsError
		if !errors.As(err, &pe) {
			t.Errorf("%s %s: %v, want a *tools.ParamsError", tt.name, tt.input, err)
			continue
		}
		if !strings.Contains(pe.Details, tt.details) {
			t.Errorf("%s %s: details %q do not say %q", tt.name, tt.input, pe.Details, tt.details)
		}
	}
}

func TestCalculateToolError(t *testing.T) {
	r := newRegistry(t, nil)
	_, err := call(t, r, "calculate", `{"expression":"1/(2-2)"}`)
	if !errors.Is(err, ErrDivisionByZero) {
		t.Fatalf("1/(2-2): %v, want division by zero", err)
	}
	if want := "division by zero (at position 2)"; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
}

func TestSearchWithoutBackend(t *testing.T) {
	r := newRegistry(t, &Options{})
	_, err := call(t, r, "search_web", `{"query":"2023年人工智能的最新进展"}`)
	if !errors.Is(err, ErrNoBackend) {
		t.Fatalf("search_web without a backend: %v, want ErrNoBackend", err)
	}
	if !strings.Contains(err.Error(), "agent.search.searxng_url") {
		t.Errorf("error %q does not say how to configure a backend", err)
	}
	// A blank query is refused before anything else.
	if _, err := call(t, r, "search_web", `{"query":"   "}`); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("blank query: %v", err)
	}
}

// fakeBackend records what search_web asks and answers canned results.
type fakeBackend struct {
	query   string
	limit   int
	results []Result
	err     error
}

func (f *fakeBackend) Search(ctx context.Context, query string, limit int) ([]Result, error) {
	f.query, f.limit = query, limit
	return f.results, f.err
}

func TestSearchToolUsesBackend(t *testing.T) {
	f := &fakeBackend{results: []Result{{URL: "https://a.example", ID: "result-1", Score: 1}, {URL: "https://b.example", ID: "result-2"}}}
	r := newRegistry(t, &Options{Search: f})
	got, err := call(t, r, "search_web", `{"query":"  golang  "}`)
	if err != nil {
		t.Fatal(err)
	}
	if f.query != "golang" || f.limit != DefaultSearchLimit {
		t.Errorf("backend asked %q limit %d, want %q limit %d", f.query, f.limit, "golang", DefaultSearchLimit)
	}
	want := `[{"url":"https://a.example","id":"result-1","title":"","score":1,"publishedDate":"","author":"","text":"","summary":""},` +
		`{"url":"https://b.example","id":"result-2","title":"","score":0,"publishedDate":"","author":"","text":"","summary":""}]`
	if got != want {
		t.Errorf("search_web = %s\nwant %s", got, want)
	}

	// A backend that overshoots the limit is cut; none is [] not null.
	if got, _ := call(t, r, "search_web", `{"query":"x","limit":1}`); !strings.HasPrefix(got, `[{"url":"https://a.example"`) || strings.Contains(got, "b.example") {
		t.Errorf("limit 1: %s", got)
	}
	f.results = nil
	if got, _ := call(t, r, "search_web", `{"query":"x"}`); got != "[]" {
		t.Errorf("no results: %s, want []", got)
	}
	f.err = errors.New("boom")
	if _, err := call(t, r, "search_web", `{"query":"x"}`); err == nil || err.Error() != "boom" {
		t.Errorf("backend error: %v", err)
	}
}
