package tools

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// quickInstanceAgrees checks that where quickInstance decodes input, it decodes it as
// decodeGeneric does, and reports whether it did.
func quickInstanceAgrees(t *testing.T, input []byte) bool {
	t.Helper()
	if !json.Valid(input) {
		return false
	}
	got, ok := quickInstance(input)
	if !ok {
		return false
	}
	want, err := decodeGeneric(input)
	if err != nil {
		t.Errorf("quickInstance decoded %q, which decodeGeneric refuses: %v", input, err)
		return true
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("quickInstance(%q) = %#v, decodeGeneric = %#v", input, got, want)
	}
	return true
}

func TestQuickInstance(t *testing.T) {
	deep := strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)
	for _, c := range []struct {
		input string
		quick bool // whether quickInstance must decode it itself
	}{
		{`{"level":80}`, true},
		{` { "level" : -80 , "mode" : "b" } `, true},
		{`{"expression":"smile","on":true,"off":false,"none":null}`, true},
		{`{"a":[1,2.5,"x",{"b":[]}],"c":{}}`, true},
		{`{"level":80,"level":81}`, true},
		{`{"中文":"北京今天天气晴朗"}`, true},
		{`{"n":123456789012345678}`, true},
		{`{"n":1234567890123456789}`, true},  // 19 digits, through number()
		{`{"n":-9223372036854775808}`, true}, // math.MinInt64
		{`{"n":9223372036854775808}`, true},  // past int64: a float64
		{`{"n":80.0}`, true},
		{`{"n":1e2}`, true},
		{`{"n":-0}`, true},
		{`{"n":1E-400}`, true},
		{`[]`, true},
		{`"s"`, true},
		{`7`, true},
		{deep[1 : len(deep)-1], true},
		{`{"n":1e400}`, false},      // out of range: the slow path says so
		{`{"s":"a\"b"}`, false},     // an escape
		{`{"s":"\u00e9"}`, false},   // an escape
		{"{\"s\":\"\xff\"}", false}, // invalid UTF-8, replaced by U+FFFD
		{deep, false},               // nested past maxDepth
		{`{"a":1`, false},           // not JSON
		{`{"a":01}`, false},         // not JSON
		{`{"a":-.5}`, false},        // not JSON
		{`{"a":1} x`, false},        // not JSON
	} {
		if got := quickInstanceAgrees(t, []byte(c.input)); got != c.quick {
			t.Errorf("%q: decoded by quickInstance = %v, want %v", c.input, got, c.quick)
		}
	}
}

// FuzzQuickInstance: quickInstance decodes every input it takes as encoding/json does.
func FuzzQuickInstance(f *testing.F) {
	for _, s := range []string{`{"level":80}`, `{"a":[1,2.5,"x",{"b":[]}],"c":{}}`, `{"n":-9223372036854775808}`, `{"s":"\u00e9"}`, `[1e2,-0,0.5e-3]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		quickInstanceAgrees(t, input)
	})
}

func BenchmarkDecodeInstance(b *testing.B) {
	input := []byte(`{"level":80}`)
	b.Run("quick", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeInstance(input); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeGeneric(input); err != nil {
				b.Fatal(err)
			}
		}
	})
}
