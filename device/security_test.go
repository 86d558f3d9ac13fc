package device_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/protocol"
)

// TestNestingLimitOnTheWire sends tool_input nested around the documented bound (tools/doc.go:
// "Input nested more than 32 levels deep is refused before validation") as raw frames, the way a
// hostile server would, and checks each is answered -32602 naming the bound, one level less gets
// past it, and nesting far beyond what encoding/json itself accepts (10000) is answered too. After
// all of it the line is the same one and a plain call still works: nothing the server sends may
// take the device down.
func TestNestingLimitOnTheWire(t *testing.T) {
	checkLeaks(t)
	l := registeredLine(t, device.Options{})

	arrays := func(n int) string { return strings.Repeat("[", n) + "1" + strings.Repeat("]", n) }
	objects := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
	const bound = "nested more than 32 levels deep"
	cases := []struct {
		name  string
		level string // the value of tool_input.level; tool_input itself is level 0
		// wantBound: details must name the bound; otherwise they must not (the schema refuses it).
		wantBound bool
		// anyError: past encoding/json's own limit the answer may be any error code, but an answer.
		anyError bool
	}{
		{name: "arrays at the bound", level: arrays(32), wantBound: true},
		{name: "objects at the bound", level: objects(32), wantBound: true},
		{name: "arrays one level less", level: arrays(31)},
		{name: "objects one level less", level: objects(31)},
		{name: "arrays past encoding/json's limit", level: arrays(100_000), anyError: true},
		{name: "unclosed nesting", level: strings.Repeat("[", 200_000), anyError: true},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := fmt.Sprintf("deep-%d", i)
			l.send(websocket.MessageText, `{"jsonrpc":"2.0","method":"mcp/tool/execute","params":{"tool_name":"amplify_volume","tool_input":{"level":`+
				tc.level+`}},"id":"`+id+`"}`)
			raw := l.recv()
			var resp struct {
				ID    *string `json:"id"`
				Error *struct {
					Code int
					Data struct{ Details string }
				}
			}
			if err := json.Unmarshal(raw, &resp); err != nil {
				t.Fatalf("answer %.200s: %v", raw, err)
			}
			if resp.Error == nil {
				t.Fatalf("answer %.300s, want an error", raw)
			}
			t.Logf("answer: %.300s", raw)
			if tc.anyError {
				// A frame that is not even parsed may be answered with id null (-32700); one that is
				// parsed must keep its id.
				if resp.ID != nil && *resp.ID != id {
					t.Errorf("answered id %q, want %q or null", *resp.ID, id)
				}
				return
			}
			if resp.ID == nil || *resp.ID != id || resp.Error.Code != protocol.CodeInvalidParams {
				t.Fatalf("answer %.300s, want -32602 for %s", raw, id)
			}
			if got := strings.Contains(resp.Error.Data.Details, bound); got != tc.wantBound {
				t.Errorf("details %q: naming %q is %v, want %v", resp.Error.Data.Details, bound, got, tc.wantBound)
			}
		})
	}

	// The same line still serves an ordinary call.
	l.send(websocket.MessageText, `{"jsonrpc":"2.0","method":"mcp/tool/execute","params":{"tool_name":"amplify_volume","tool_input":{"level":7}},"id":"after"}`)
	if got := string(l.recv()); !strings.Contains(got, `"after"`) || !strings.Contains(got, `"result"`) {
		t.Errorf("after the deep inputs the device answered %s, want a result for id after", got)
	}
}
