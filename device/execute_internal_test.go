package device

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/devicectl/devicectl/protocol"
)

// quickExecuteAgrees checks that where quickExecute reads params, it reads them as json.Unmarshal
// does, and reports whether it did.
func quickExecuteAgrees(t *testing.T, params []byte) bool {
	t.Helper()
	if len(params) == 0 || !json.Valid(params) {
		return false
	}
	var got protocol.ExecuteParams
	if !quickExecute(params, &got) {
		return false
	}
	var want protocol.ExecuteParams
	if err := json.Unmarshal(params, &want); err != nil {
		t.Errorf("quickExecute read %s, which json.Unmarshal refuses: %v", params, err)
		return true
	}
	if got.ToolName != want.ToolName || !bytes.Equal(got.ToolInput, want.ToolInput) {
		t.Errorf("quickExecute(%s) = %q %s, json.Unmarshal: %q %s", params, got.ToolName, got.ToolInput, want.ToolName, want.ToolInput)
	}
	return true
}

func TestQuickExecute(t *testing.T) {
	for _, c := range []struct {
		params string
		quick  bool // whether quickExecute must read it itself
	}{
		{`{"tool_name":"amplify_volume","tool_input":{"level":80}}`, true},
		{`{ "tool_input" : { "level" : 80 } , "tool_name" : "amplify_volume" }`, true},
		{`{"tool_name":"a","tool_input":{},"meta":{"x":[1,"}"]}}`, true},
		{`{"tool_name":"a","tool_name":"b","tool_input":null}`, true},
		{`{"tool_name":"音量"}`, true},
		{`{"tool_name":"a\u0062"}`, false},           // an escape
		{`{"TOOL_NAME":"a","tool_input":{}}`, false}, // matches only ignoring case
		{`{"tool_name":"a","Tool_Input":{}}`, false},
		{"{\"tool_name\":\"\xff\"}", false}, // bad UTF-8
		{`{"tool_name":""}`, false},
		{`{"tool_name":7}`, false},
		{`{"tool_name":null}`, false},
		{`{"tool_input":{}}`, false},
		{`[]`, false},
		{`"x"`, false},
	} {
		if got := quickExecuteAgrees(t, []byte(c.params)); got != c.quick {
			t.Errorf("%s: read by quickExecute = %v, want %v", c.params, got, c.quick)
		}
	}
}

// FuzzQuickExecute: quickExecute reads every params it takes as json.Unmarshal does.
func FuzzQuickExecute(f *testing.F) {
	for _, s := range []string{`{"tool_name":"amplify_volume","tool_input":{"level":80}}`, `{"tool_name":"a\"b","tool_input":[]}`, `{"Tool_name":"x"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		quickExecuteAgrees(t, params)
	})
}
