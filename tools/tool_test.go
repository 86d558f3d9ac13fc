package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/devicectl/devicectl/tools"
)

// TestDeclarationWire round-trips the seed's mcp/registerTools example
// (testdata/registertools_seed.json, copied verbatim from
// seeds/002_16a28b425e09b876.txt) through []Declaration: what we send must
// be exactly what the protocol shows.
func TestDeclarationWire(t *testing.T) {
	seed, err := os.ReadFile("testdata/registertools_seed.json")
	if err != nil {
		t.Fatal(err)
	}
	var req struct {
		Params struct {
			Tools json.RawMessage `json:"tools"`
		} `json:"params"`
	}
	if err := json.Unmarshal(seed, &req); err != nil {
		t.Fatal(err)
	}
	var decls []tools.Declaration
	if err := json.Unmarshal(req.Params.Tools, &decls); err != nil {
		t.Fatal(err)
	}
	if len(decls) != 2 {
		t.Fatalf("decoded %d declarations, want 2", len(decls))
	}
	got, err := json.Marshal(decls)
	if err != nil {
		t.Fatal(err)
	}
	if !jsonEqual(t, got, req.Params.Tools) {
		t.Errorf("marshalled declarations differ from the seed:\n got %s\nwant %s", got, req.Params.Tools)
	}

	// The seed's declarations are valid tools as they stand.
	r := tools.NewRegistry()
	for _, d := range decls {
		tool := &tools.Tool{Declaration: d, Handler: func(context.Context, json.RawMessage) (any, error) { return nil, nil }}
		if err := r.Add(tool); err != nil {
			t.Errorf("Add(seed %s): %v", d.Name, err)
		}
	}
	got, err = json.Marshal(r.Declarations())
	if err != nil {
		t.Fatal(err)
	}
	if !jsonEqual(t, got, req.Params.Tools) {
		t.Errorf("registry declarations differ from the seed:\n got %s\nwant %s", got, req.Params.Tools)
	}
}

func TestInvoke(t *testing.T) {
	boom := errors.New("boom")
	var gotInput string
	tool := &tools.Tool{Handler: func(ctx context.Context, in json.RawMessage) (any, error) {
		gotInput = string(in)
		return "result", boom
	}}
	res, err := tool.Invoke(context.Background(), json.RawMessage(`{"a":1}`))
	if res != "result" || !errors.Is(err, boom) || gotInput != `{"a":1}` {
		t.Errorf("Invoke = %v, %v (handler saw %s); want result, boom, {\"a\":1}", res, err, gotInput)
	}
}
