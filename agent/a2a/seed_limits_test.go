package a2a

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// sendBody is a tasks/send (or tasks/send/stream) of texts, one part each, to task id.
func sendBody(method, id string, texts ...string) string {
	parts := make([]string, len(texts))
	for i, text := range texts {
		b, _ := json.Marshal(text)
		parts[i] = `{"type":"text","text":` + string(b) + `}`
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":"r","method":%q,"params":{"id":%q,"sessionId":"s","message":{"role":"user","parts":[%s]}}}`,
		method, id, strings.Join(parts, ","))
}

// wantRefused checks that body is a -32600 whose details are details.
func wantRefused(t *testing.T, what, body, details string) {
	t.Helper()
	var r rpcReply
	if err := json.Unmarshal([]byte(body), &r); err != nil || r.Error == nil {
		t.Fatalf("%s: not a JSON-RPC error: %.300s", what, body)
	}
	if r.Error.Code != codeInvalidRequest || r.Error.Data == nil || r.Error.Data.Details != details {
		t.Errorf("%s: got %.300s\nwant -32600 with details %q", what, body, details)
	}
}

// TestSeedMessageBytes: a message whose text, all its parts together, is past
// agent.limits.message_bytes is refused on both routes and stores nothing; one at the limit runs.
func TestSeedMessageBytes(t *testing.T) {
	run := &fakeRunner{chunks: replyChunks}
	ts := newTestServer(t, run, "", func(o *Options) { o.MessageBytes = 100 })
	over := []string{strings.Repeat("a", 60), strings.Repeat("b", 41)}
	const details = "The message's text is 101 bytes; agent.limits.message_bytes is 100"
	body, _ := post(t, ts.URL+PathSeedSend, sendBody("tasks/send", "task-m", over...))
	wantRefused(t, "send", body, details)
	body, _ = post(t, ts.URL+PathSeedStream, sendBody("tasks/send/stream", "task-m", over...))
	wantRefused(t, "stream", body, details)
	if _, code := get(t, ts.URL+"/tasks/task-m"); code != http.StatusNotFound {
		t.Errorf("a refused message stored its task: GET %d", code)
	}
	if n := len(run.requests()); n != 0 {
		t.Errorf("the runner got %d turns", n)
	}
	body, _ = post(t, ts.URL+PathSeedSend, sendBody("tasks/send", "task-m", strings.Repeat("c", 100)))
	if !strings.Contains(body, `"state":"completed"`) {
		t.Errorf("a message at the limit: %.300s", body)
	}
}

// TestSeedMessageBytesDefault: without the option, the limit is agent.limits.message_bytes'
// default, 64 KiB.
func TestSeedMessageBytesDefault(t *testing.T) {
	ts := newTestServer(t, &fakeRunner{chunks: replyChunks}, "", nil)
	body, _ := post(t, ts.URL+PathSeedSend, sendBody("tasks/send", "task-m", strings.Repeat("a", 64<<10+1)))
	wantRefused(t, "send", body, "The message's text is 65537 bytes; agent.limits.message_bytes is 65536")
}

// TestSeedTaskHistory: a send that would take a task's history past agent.limits.task_history
// is refused on both routes, and the task stays as it was.
func TestSeedTaskHistory(t *testing.T) {
	run := &fakeRunner{chunks: replyChunks}
	ts := newTestServer(t, run, "", func(o *Options) { o.TaskHistory = 5 })
	for i := range 2 {
		body, _ := post(t, ts.URL+PathSeedSend, sendBody("tasks/send", "task-h", fmt.Sprint("hello ", i)))
		if !strings.Contains(body, `"state":"completed"`) {
			t.Fatalf("send %d: %.300s", i, body)
		}
	}
	const details = "Task task-h holds 4 messages; agent.limits.task_history is 5 and this send would add 2 (the message and its reply): start a new task"
	body, _ := post(t, ts.URL+PathSeedSend, sendBody("tasks/send", "task-h", "once more"))
	wantRefused(t, "send", body, details)
	body, _ = post(t, ts.URL+PathSeedStream, sendBody("tasks/send/stream", "task-h", "once more"))
	wantRefused(t, "stream", body, details)
	body, _ = get(t, ts.URL+"/tasks/task-h")
	var task seedTask
	if err := json.Unmarshal([]byte(body), &task); err != nil {
		t.Fatal(err)
	}
	if len(task.History) != 4 || task.Status.State != stateCompleted {
		t.Errorf("after the refusals the task holds %d messages, state %s", len(task.History), task.Status.State)
	}
	if n := len(run.requests()); n != 2 {
		t.Errorf("the runner got %d turns, want 2", n)
	}
	// Another task still has room.
	if body, _ := post(t, ts.URL+PathSeedSend, sendBody("tasks/send", "task-h2", "hi")); !strings.Contains(body, `"state":"completed"`) {
		t.Errorf("a new task: %.300s", body)
	}
}
