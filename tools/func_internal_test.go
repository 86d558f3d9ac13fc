package tools

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// The fast path of Func is taken for flat inputs, and only for them.
func TestFlatAssigner(t *testing.T) {
	type flat struct {
		N    int    `json:"n,omitempty"`
		S    string `json:"s"`
		Skip string `json:"-"`
		F    float64
	}
	type named string
	type withTime struct{ T time.Time }
	type withPointer struct{ P *int }
	type withFloat32 struct{ F float32 }
	type withString struct {
		N int `json:"n,string"`
	}
	type embedded struct{ flat }
	type oddName struct {
		N int `json:"n m"` // encoding/json takes such a name; one it refuses falls back to N
	}
	if flatAssigner(reflect.TypeFor[flat]()) == nil || flatAssigner(reflect.TypeFor[struct{ N named }]()) == nil {
		t.Error("a flat struct gets no assigner")
	}
	for _, typ := range []reflect.Type{
		reflect.TypeFor[withTime](), reflect.TypeFor[withPointer](), reflect.TypeFor[withFloat32](),
		reflect.TypeFor[withString](), reflect.TypeFor[embedded](), reflect.TypeFor[int](),
		reflect.TypeFor[oddName](),
	} {
		if flatAssigner(typ) != nil {
			t.Errorf("%v gets an assigner; want encoding/json to decode it", typ)
		}
	}
	var v flat
	ok := flatAssigner(reflect.TypeFor[flat]())(reflect.ValueOf(&v).Elem(), map[string]any{"n": int64(4), "s": "x", "F": 0.5})
	if !ok || v != (flat{N: 4, S: "x", F: 0.5}) {
		t.Errorf("assigned %+v, %v", v, ok)
	}
}

// Prepared.Invoke hands the decoded input to the handler, for the same bytes only.
func TestPreparedCarriesDecodedInput(t *testing.T) {
	r := NewRegistry()
	var saw any
	var ok bool
	tool := &Tool{
		Declaration: Declaration{Name: "t", Description: "d", MainType: Remote, SubType: Query, Parameters: mustSchema(t)},
		Handler: func(ctx context.Context, in json.RawMessage) (any, error) {
			saw, ok = decoded(ctx, in)
			return nil, nil
		},
	}
	if err := r.Add(tool); err != nil {
		t.Fatal(err)
	}
	p, err := r.Prepare("t", json.RawMessage(`{"n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	p.Invoke(context.Background())
	if m, _ := saw.(map[string]any); !ok || m["n"] != int64(1) {
		t.Errorf("the handler saw %#v, %v; want the decoded input", saw, ok)
	}
	// The same context with other bytes (a copy) carries nothing for them.
	ctx := context.WithValue(context.Background(), preparedKey{}, p)
	if _, ok := decoded(ctx, json.RawMessage(`{"n":1}`)); ok {
		t.Error("decoded matched a copy of the input")
	}
}

func mustSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(`{"type":"object","properties":{"n":{"type":"integer"}}}`), &s); err != nil {
		t.Fatal(err)
	}
	return &s
}
