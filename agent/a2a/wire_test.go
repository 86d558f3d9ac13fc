package a2a

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/devicectl/devicectl/agent"
)

// TestA2AWireErrors pins where data.details sits on the A2A paths: a2a-go writes data as a
// list of typed details, the first a google.protobuf.Struct that carries {"details": ...}.
func TestA2AWireErrors(t *testing.T) {
	run := &fakeRunner{err: &agent.DeviceChoiceError{MACs: []string{"aa:aa:aa:aa:aa:aa", "bb:bb:bb:bb:bb:bb"}}}
	ts := newTestServer(t, run, "", nil)
	const want = "Several devices are registered; name one in metadata.mac: aa:aa:aa:aa:aa:aa, bb:bb:bb:bb:bb:bb"
	cases := []struct{ path, body string }{
		{PathJSONRPC, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"笑一个"}]}}}`},
		{PathJSONRPCv03, `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"笑一个"}]}}}`},
	}
	for _, tc := range cases {
		body, code := post(t, ts.URL+tc.path, tc.body)
		t.Logf("POST %s: %d %s", tc.path, code, body)
		var r struct {
			Error struct {
				Code int              `json:"code"`
				Data []map[string]any `json:"data"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatalf("%s: %v: %s", tc.path, err, body)
		}
		if code != http.StatusOK || r.Error.Code != -32602 || len(r.Error.Data) == 0 || r.Error.Data[0]["details"] != want {
			t.Errorf("%s: got %s, want -32602 with data[0].details %q", tc.path, body, want)
		}
	}
}

// TestA2AWireErrorDetails: every bad request on the A2A paths names its problem in
// data[0].details, and the server keeps serving.
func TestA2AWireErrorDetails(t *testing.T) {
	ts := newTestServer(t, &fakeRunner{chunks: replyChunks}, "", nil)
	cases := []struct {
		path, body string
		code       int
		details    string
	}{
		{PathJSONRPC, `{"jsonrpc":"2.0",`, -32700, "Malformed JSON: unexpected end of JSON input"},
		{PathJSONRPCv03, ``, -32700, "The request body is empty"},
		{PathJSONRPC, `[1]`, -32600, "The request must be a JSON object"},
		{PathJSONRPC, `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{}}`, -32601,
			`Method not found: "message/send" (/a2a serves ` + strings.Join(methodsV1, ", ") + `)`},
		{PathJSONRPCv03, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}`, -32601,
			`Method not found: "SendMessage" (/a2a/v0.3 serves ` + strings.Join(methodsV03, ", ") + `)`},
		{PathJSONRPC, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}`, -32602, "Missing required parameter: message"},
		{PathJSONRPCv03, `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{}}`, -32602, "Missing required parameter: message"},
		{PathJSONRPC, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"nope"}}`, -32001, "Unknown task id: nope"},
		{PathJSONRPCv03, `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"nope"}}`, -32001, "Unknown task id: nope"},
		{PathJSONRPCv03, `{"jsonrpc":"2.0","id":1,"method":"tasks/cancel","params":{"id":"nope"}}`, -32001, "Unknown task id: nope"},
		{PathJSONRPC, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"data":{"a":1}}]}}}`,
			-32602, "The message has no text part"},
	}
	for _, tc := range cases {
		body, code := post(t, ts.URL+tc.path, tc.body)
		var r struct {
			Error struct {
				Code int              `json:"code"`
				Data []map[string]any `json:"data"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatalf("%s %s: %v: %s", tc.path, tc.body, err, body)
		}
		if code != http.StatusOK || r.Error.Code != tc.code || len(r.Error.Data) == 0 || r.Error.Data[0]["details"] != tc.details {
			t.Errorf("POST %s %s\n got %s\nwant %d with data[0].details %q", tc.path, tc.body, body, tc.code, tc.details)
		}
	}
	res, err := newV1Client(t, ts, "").SendMessage(t.Context(), userMessage("hi", nil))
	if err != nil || res.(*a2a.Task).Status.State != a2a.TaskStateCompleted {
		t.Errorf("after the errors, send: %v %v", res, err)
	}
}
