package a2a

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
)

// httpResult is a whole HTTP answer.
type httpResult struct {
	status int
	header http.Header
	body   string
}

func postRaw(t testing.TB, url, body string) httpResult {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return httpResult{resp.StatusCode, resp.Header, string(b)}
}

// rpcAnswer is a JSON-RPC response as the A2A paths write it.
type rpcAnswer struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int              `json:"code"`
		Message string           `json:"message"`
		Data    []map[string]any `json:"data"`
	} `json:"error"`
}

func (r rpcAnswer) details() any {
	if r.Error == nil || len(r.Error.Data) == 0 {
		return nil
	}
	return r.Error.Data[0]["details"]
}

func decodeAnswer(t testing.TB, what string, res httpResult) rpcAnswer {
	t.Helper()
	var a rpcAnswer
	if err := json.Unmarshal([]byte(res.body), &a); err != nil {
		t.Fatalf("%s: the answer is not JSON (%v): %d %q", what, err, res.status, res.body)
	}
	return a
}

// TestA2ANotifications: a JSON-RPC notification (no id member) gets no answer: HTTP 204 with an
// empty body, and nothing runs. A null id is a request like any other and is answered.
func TestA2ANotifications(t *testing.T) {
	run := &fakeRunner{chunks: replyChunks}
	ts := newTestServer(t, run, "", nil)
	cases := []struct{ path, body string }{
		{PathJSONRPC, `{"jsonrpc":"2.0","method":"GetTask","params":{"id":"nope"}}`},
		{PathJSONRPC, `{"jsonrpc":"2.0","method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`},
		{PathJSONRPC, `{"jsonrpc":"2.0","method":"SendStreamingMessage","params":{"message":{"messageId":"m2","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`},
		{PathJSONRPC, `{"jsonrpc":"2.0","method":"NoSuchMethod"}`},
		{PathJSONRPCv03, `{"jsonrpc":"2.0","method":"tasks/get","params":{"id":"nope"}}`},
		{PathJSONRPCv03, `{"jsonrpc":"2.0","method":"message/send","params":{"message":{"kind":"message","messageId":"m3","role":"user","parts":[{"kind":"text","text":"hi"}]}}}`},
	}
	for _, tc := range cases {
		res := postRaw(t, ts.URL+tc.path, tc.body)
		if res.status != http.StatusNoContent || res.body != "" {
			t.Errorf("notification to %s %s: %d %q, want 204 and no body", tc.path, tc.body, res.status, res.body)
		}
	}
	if reqs := run.requests(); len(reqs) != 0 {
		t.Errorf("notifications ran %d turns, want none", len(reqs))
	}

	// "id": null is a request (a poor one): it gets its answer.
	res := postRaw(t, ts.URL+PathJSONRPC, `{"jsonrpc":"2.0","id":null,"method":"GetTask","params":{"id":"nope"}}`)
	if a := decodeAnswer(t, "null id", res); res.status != http.StatusOK || string(a.ID) != "null" || a.Error == nil || a.Error.Code != -32001 {
		t.Errorf("null id: %d %s, want -32001 with id null", res.status, res.body)
	}
}

// TestA2AIDs: an id is echoed exactly; a body that is not UTF-8 (so not JSON, RFC 8259) is a
// parse error answered with id null, in valid JSON.
func TestA2AIDs(t *testing.T) {
	ts := newTestServer(t, &fakeRunner{chunks: replyChunks}, "", nil)
	for _, path := range []string{PathJSONRPC, PathJSONRPCv03} {
		method := map[string]string{PathJSONRPC: "GetTask", PathJSONRPCv03: "tasks/get"}[path]
		for _, tc := range []struct{ id, body string }{
			{"\"\xff\xfe\"", "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\xfe\",\"method\":\"" + method + "\",\"params\":{\"id\":\"nope\"}}"},
			{"\"\xff\xfe\"", "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\xfe\",\"method\":\"Bogus\",\"params\":{}}"},
			{`"ok"`, "{\"jsonrpc\":\"2.0\",\"id\":\"ok\",\"method\":\"" + method + "\",\"params\":{\"id\":\"\xff\"}}"},
		} {
			res := postRaw(t, ts.URL+path, tc.body)
			if !utf8.ValidString(res.body) || !json.Valid([]byte(res.body)) {
				t.Errorf("%s id %q: the answer is not valid JSON: %q", path, tc.id, res.body)
				continue
			}
			a := decodeAnswer(t, path, res)
			if string(a.ID) != "null" || a.Error == nil || a.Error.Code != -32700 || a.details() != "The request body is not valid UTF-8, as JSON text must be (RFC 8259)" {
				t.Errorf("%s id %q: %s, want -32700 with id null and details", path, tc.id, res.body)
			}
		}
		// Valid ids come back as sent.
		for _, id := range []string{`"é\u2028x"`, `"\ud83d\ude00"`, `7`, `-1.5`} {
			res := postRaw(t, ts.URL+path, `{"jsonrpc":"2.0","id":`+id+`,"method":"Bogus"}`)
			a := decodeAnswer(t, path, res)
			var want, got any
			json.Unmarshal([]byte(id), &want)
			json.Unmarshal(a.ID, &got)
			if got != want || a.Error == nil || a.Error.Code != -32601 {
				t.Errorf("%s id %s: answered with id %s: %s", path, id, a.ID, res.body)
			}
		}
	}
}

// TestA2AErrorContentType: every JSON-RPC answer on the A2A paths, errors included, is
// application/json (a2a-go's 0.3 transport writes its errors without the header).
func TestA2AErrorContentType(t *testing.T) {
	ts := newTestServer(t, &fakeRunner{chunks: replyChunks}, "", nil)
	cases := []struct{ path, body string }{
		{PathJSONRPCv03, `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"nope"}}`},
		{PathJSONRPCv03, `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{}}`},
		{PathJSONRPCv03, `{"jsonrpc":"1.0","id":1,"method":"tasks/get","params":{"id":"nope"}}`},
		{PathJSONRPCv03, `{"jsonrpc":"2.0","id":[1],"method":"tasks/get","params":{"id":"nope"}}`},
		{PathJSONRPCv03, `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":5}}`},
		{PathJSONRPCv03, `{"jsonrpc":`},
		{PathJSONRPC, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"nope"}}`},
		{PathJSONRPC, `{"jsonrpc":"2.0","id":1,"method":"Bogus"}`},
	}
	resp, err := http.Get(ts.URL + PathJSONRPCv03)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("GET %s: Content-Type %q, want application/json", PathJSONRPCv03, ct)
	}
	for _, tc := range cases {
		res := postRaw(t, ts.URL+tc.path, tc.body)
		if ct := res.header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s %s: Content-Type %q, want application/json (%s)", tc.path, tc.body, ct, res.body)
		}
		if a := decodeAnswer(t, tc.path, res); a.Error == nil {
			t.Errorf("%s %s: no error: %s", tc.path, tc.body, res.body)
		}
	}
}

// TestA2AMessageToFinishedTask: a message that continues a finished task is
// UnsupportedOperationError (-32004) with details, in 1.0 and 0.3 alike; the task is unchanged.
func TestA2AMessageToFinishedTask(t *testing.T) {
	run := &fakeRunner{chunks: replyChunks}
	ts := newTestServer(t, run, "", nil)
	for name, c := range map[string]*a2aclient.Client{"1.0": newV1Client(t, ts, ""), "0.3": newV03Client(t, ts)} {
		res, err := c.SendMessage(t.Context(), userMessage("把音量调到30", nil))
		if err != nil {
			t.Fatal(err)
		}
		task := res.(*a2a.Task)
		turns := len(run.requests())
		again := userMessage("再大一点", nil)
		again.Message.TaskID = task.ID
		_, err = c.SendMessage(t.Context(), again)
		if !errors.Is(err, a2a.ErrUnsupportedOperation) {
			t.Fatalf("%s: a message to completed task %s: %v, want UnsupportedOperationError", name, task.ID, err)
		}
		var ae *a2a.Error
		want := "Task " + string(task.ID) + " is completed and takes no more messages; send the message without taskId to start a new task"
		if !errors.As(err, &ae) || ae.Details["details"] != want {
			t.Errorf("%s: details %v, want %q", name, ae, want)
		}
		if n := len(run.requests()); n != turns {
			t.Errorf("%s: the refused message ran a turn", name)
		}
		got, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: task.ID})
		if err != nil || got.Status.State != a2a.TaskStateCompleted || len(got.History) != len(task.History) {
			t.Errorf("%s: the task after the refused message: %v %v", name, got, err)
		}
	}

	// The raw 1.0 answer: code -32004.
	res, err := newV1Client(t, ts, "").SendMessage(t.Context(), userMessage("hi", nil))
	if err != nil {
		t.Fatal(err)
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m9","taskId":"` + string(res.(*a2a.Task).ID) + `","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`
	if a := decodeAnswer(t, "raw", postRaw(t, ts.URL+PathJSONRPC, body)); a.Error == nil || a.Error.Code != -32004 {
		t.Errorf("raw send to a finished task: %+v, want -32004", a.Error)
	}
}
