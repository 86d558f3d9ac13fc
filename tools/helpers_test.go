package tools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/devicectl/devicectl/tools"
)

// The builtin-like tools the tests (and the fuzz target) validate against:
// the same shapes as tools/builtin, without the hardware.

type volumeIn struct {
	Level int `json:"level" jsonschema:"volume, 0 to 100" tool:"min=0,max=100"`
}

type volumeOut struct {
	Status string `json:"status"`
	Level  int    `json:"level"`
}

type expressionIn struct {
	Expression string `json:"expression" jsonschema:"the expression to show" tool:"enum=close_eyes_smile|close_eyes|amazed|smile|cry|idle"`
}

type statusIn struct{}

func newRegistry(tb testing.TB) *tools.Registry {
	tb.Helper()
	r := tools.NewRegistry()
	volume := must(tools.Func(tools.Declaration{
		Name: "amplify_volume", Description: "Set the volume.", MainType: tools.Remote, SubType: tools.Control,
	}, func(ctx context.Context, in volumeIn) (volumeOut, error) {
		return volumeOut{Status: "success", Level: in.Level}, nil
	}))(tb)
	volume.Resources = []string{"speaker"}
	expression := must(tools.Func(tools.Declaration{
		Name: "set_virtual_human_expression", Description: "Set the face.", MainType: tools.Remote, SubType: tools.Control,
	}, func(ctx context.Context, in expressionIn) (string, error) {
		return in.Expression, nil
	}))(tb)
	status := must(tools.Func(tools.Declaration{
		Name: "get_device_status", Description: "Read the status.", MainType: tools.Remote, SubType: tools.Query,
	}, func(ctx context.Context, in statusIn) (map[string]int, error) {
		return map[string]int{"volume": 50}, nil
	}))(tb)
	for _, tool := range []*tools.Tool{volume, expression, status} {
		if err := r.Add(tool); err != nil {
			tb.Fatal(err)
		}
	}
	return r
}

// must turns (v, err) into a function of the test, so that construction
// reads as one expression.
func must[T any](v T, err error) func(testing.TB) T {
	return func(tb testing.TB) T {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
		return v
	}
}

// jsonEqual reports whether a and b are the same JSON value.
func jsonEqual(tb testing.TB, a, b []byte) bool {
	tb.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		tb.Fatalf("unmarshal %s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		tb.Fatalf("unmarshal %s: %v", b, err)
	}
	ca, _ := json.Marshal(va) // map keys sorted: a canonical form
	cb, _ := json.Marshal(vb)
	return bytes.Equal(ca, cb)
}
