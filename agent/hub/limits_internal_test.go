package hub

import (
	"encoding/json"
	"testing"
)

func TestCountElements(t *testing.T) {
	for raw, want := range map[string]int{
		`[]`:                            0,
		` [ ] `:                         0,
		`[1]`:                           1,
		`[{}]`:                          1,
		`[[]]`:                          1,
		`[{"a":[1,2,3]},{"b":{"c":1}}]`: 2,
		`[",,,", "]", "[", "\"", "\\"]`: 5,
		`["\",", {"d":"a,b\\\",c"}, 3]`: 3,
		"[\n1,\n2\n]":                   2,
		`{"a":1,"b":2}`:                 0,
		`"x"`:                           0,
		`null`:                          0,
	} {
		if got := countElements([]byte(raw)); got != want {
			t.Errorf("countElements(%s) = %d, want %d", raw, got, want)
		}
	}
}

// countElements agrees with encoding/json on every valid JSON array.
func FuzzCountElements(f *testing.F) {
	for _, s := range []string{`[]`, `[1,2]`, `[",", {"a":[1,"]"]}]`, `["\\\"", []]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var elems []json.RawMessage
		if json.Unmarshal([]byte(raw), &elems) != nil || elems == nil {
			return
		}
		if got := countElements([]byte(raw)); got != len(elems) {
			t.Errorf("countElements(%s) = %d, encoding/json counts %d", raw, got, len(elems))
		}
	})
}
