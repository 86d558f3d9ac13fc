package transport_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/devicectl/devicectl/transport"
)

func TestMembers(t *testing.T) {
	type pair struct{ name, value string }
	collect := func(raw string, limit int) []pair {
		var got []pair
		for n, v := range transport.Members(json.RawMessage(raw)) {
			got = append(got, pair{string(n), string(v)})
			if len(got) == limit {
				break
			}
		}
		return got
	}
	for _, c := range []struct {
		raw   string
		limit int
		want  []pair
	}{
		{`{"tool_name":"a","tool_input":{"x":[1,"}]"]}}`, 0, []pair{{"tool_name", `"a"`}, {"tool_input", `{"x":[1,"}]"]}`}}},
		{` { "a\u0062" : "q\"" , "n" : -1.5e3 , "z" : null } `, 0, []pair{{"ab", `"q\""`}, {"n", "-1.5e3"}, {"z", "null"}}},
		{`{"a":1,"b":2,"c":3}`, 2, []pair{{"a", "1"}, {"b", "2"}}},
		{`{}`, 0, nil},
		{`[{"a":1}]`, 0, nil},
		{`"a"`, 0, nil},
		{``, 0, nil},
	} {
		if got := collect(c.raw, c.limit); !slices.Equal(got, c.want) {
			t.Errorf("Members(%s) = %q, want %q", c.raw, got, c.want)
		}
	}
	// Not JSON: Members says nothing useful, but stays in bounds and ends.
	for _, raw := range []string{`{"a":1,`, `{"a"`, `{"a":`, `{`, `{"a":{"b":`} {
		collect(raw, 0)
	}
}
