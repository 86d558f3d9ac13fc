package control

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
)

// Whatever line a client sends, the answer is one JSON-RPC 2.0 response with exactly one of a
// result and an error, and the tool is called only for a request that names one.
func FuzzHandle(f *testing.F) {
	for _, seed := range []string{
		`{"tool":"amplify_volume","input":{"level":50}}`,
		`{"id":"x","tool":"t"}`,
		`{"id":{},"tool":"t"}`,
		`{"tool":"","input":null}`,
		`{"tool":"t","params":{}}`,
		`{"tool":`,
		`[1,2]`,
		"\xff",
		`{"tool":"t"} {"tool":"u"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		called := false
		s := &Server{opts: Options{Call: func(_ context.Context, tool string, input json.RawMessage) (json.RawMessage, error) {
			called = true
			if tool == "" || !json.Valid(input) {
				t.Errorf("called with tool %q, input %q", tool, input)
			}
			return json.RawMessage(`{"ok":true}`), nil
		}}, ctx: context.Background()}
		s.log = (&Options{}).withDefaults().Logger
		var out bytes.Buffer
		if err := writeResponse(&out, s.handle(line)); err != nil {
			t.Fatalf("writing the answer to %q: %v", line, err)
		}
		var resp Response
		if err := json.Unmarshal(out.Bytes(), &resp); err != nil {
			t.Fatalf("the answer to %q is not JSON: %v\n%s", line, err, out.Bytes())
		}
		if resp.JSONRPC != "2.0" || (resp.Error == nil) == (resp.Result == nil) || !validID(resp.ID) {
			t.Errorf("the answer to %q is not a JSON-RPC response with one of result and error: %s", line, out.Bytes())
		}
		if called != (resp.Result != nil) {
			t.Errorf("tool called %v, answer %s", called, out.Bytes())
		}
	})
}
