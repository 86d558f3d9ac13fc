package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/devicectl/devicectl/agent"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func post(t testing.TB, url, body string) (string, int) {
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
	return string(b), resp.StatusCode
}

func get(t testing.TB, url string) (string, int) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), resp.StatusCode
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file:\n got: %s\nwant: %s", name, got, want)
	}
}

const seedSendBody = `{
  "jsonrpc": "2.0",
  "id": "request-id-1",
  "method": "tasks/send",
  "params": {
    "id": "task-id-1",
    "sessionId": "session-id-1",
    "message": {"role": "user", "parts": [{"type": "text", "text": "把音量调到30"}]},
    "historyLength": 10,
    "metadata": {"mac": "aa:bb:cc:dd:ee:ff"}
  }
}`

// TestSeedRoutesGolden pins the seed routes' exact bytes: ids and timestamps come from the
// injected counter and clock.
func TestSeedRoutesGolden(t *testing.T) {
	run := &fakeRunner{chunks: replyChunks}
	ts := newTestServer(t, run, "", func(o *Options) { o.URL = "http://127.0.0.1:8080" })

	body, code := post(t, ts.URL+PathSeedSend, seedSendBody)
	if code != http.StatusOK {
		t.Fatalf("send: %d %s", code, body)
	}
	golden(t, "seed_send.golden", body)
	if r := run.requests()[0]; r.MAC != "aa:bb:cc:dd:ee:ff" || r.SessionID != "session-id-1" || r.Text != "把音量调到30" {
		t.Errorf("runner got %+v", r)
	}

	streamBody := strings.Replace(strings.Replace(seedSendBody, `"tasks/send"`, `"tasks/send/stream"`, 1), "task-id-1", "task-id-2", 1)
	resp, err := http.Post(ts.URL+PathSeedStream, "application/json", strings.NewReader(streamBody))
	if err != nil {
		t.Fatal(err)
	}
	sse, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("stream: Content-Type %q", ct)
	}
	golden(t, "seed_stream.golden", string(sse))

	body, code = get(t, ts.URL+"/tasks/task-id-2")
	if code != http.StatusOK {
		t.Fatalf("get: %d %s", code, body)
	}
	golden(t, "seed_get.golden", body)

	body, _ = post(t, ts.URL+PathSeedSend, `{"jsonrpc":"2.0","id":7,"method":"tasks/get","params":{"id":"task-id-1","historyLength":1}}`)
	golden(t, "seed_rpc_get.golden", body)

	// No ids given: the server makes them.
	body, _ = post(t, ts.URL+PathSeedSend, `{"jsonrpc":"2.0","id":8,"method":"tasks/send","params":{"message":{"role":"user","parts":[{"type":"text","text":"hi"}]}}}`)
	golden(t, "seed_send_noids.golden", body)

	body, _ = get(t, ts.URL+PathSeedCard)
	golden(t, "seed_card.golden", body)
}

func TestSeedStreamFailure(t *testing.T) {
	run := &fakeRunner{chunks: []string{"正在"}, failAfter: agent.ErrDeviceGone}
	ts := newTestServer(t, run, "", func(o *Options) { o.URL = "http://127.0.0.1:8080" })
	body, _ := post(t, ts.URL+PathSeedStream, strings.Replace(seedSendBody, `"tasks/send"`, `"tasks/send/stream"`, 1))
	golden(t, "seed_stream_failed.golden", body)
	body, _ = get(t, ts.URL+"/tasks/task-id-1")
	if !strings.Contains(body, `"state":"failed"`) || !strings.Contains(body, agent.ErrDeviceGone.Error()) {
		t.Errorf("failed task: %s", body)
	}
}

type rpcReply struct {
	ID    json.RawMessage `json:"id"`
	Error *rpcError       `json:"error"`
}

// TestSeedErrorTable walks every row of seed 004's error table, and the server keeps serving.
func TestSeedErrorTable(t *testing.T) {
	ok := func(params string) string {
		return `{"jsonrpc":"2.0","id":"r","method":"tasks/send","params":` + params + `}`
	}
	msg := `"message":{"role":"user","parts":[{"type":"text","text":"hi"}]}`
	cases := []struct {
		name, path, body string
		code             int
		details          string
		runner           *fakeRunner
	}{
		{"malformed JSON", PathSeedSend, `{"jsonrpc":"2.0",`, -32700, "Malformed JSON: unexpected end of JSON input", nil},
		{"empty body", PathSeedSend, ``, -32700, "The request body is empty", nil},
		{"not an object", PathSeedSend, `[1,2]`, -32600, "The request must be a JSON object", nil},
		{"no jsonrpc", PathSeedSend, `{"id":1,"method":"tasks/send"}`, -32600, "Missing required field: jsonrpc", nil},
		{"wrong jsonrpc", PathSeedSend, `{"jsonrpc":"1.0","id":1,"method":"tasks/send"}`, -32600, `jsonrpc must be "2.0", got "1.0"`, nil},
		{"no method", PathSeedSend, `{"jsonrpc":"2.0","id":1}`, -32600, "Missing required field: method", nil},
		{"bad id", PathSeedSend, `{"jsonrpc":"2.0","id":{},"method":"tasks/send"}`, -32600, "id must be a string, a number or null", nil},
		{"id not UTF-8", PathSeedSend, "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\xfe\",\"method\":\"tasks/send\",\"params\":{" + msg + "}}", -32700,
			"The request body is not valid UTF-8, as JSON text must be (RFC 8259)", nil},
		{"id not UTF-8 on stream", PathSeedStream, "{\"jsonrpc\":\"2.0\",\"id\":\"a\xc3\",\"method\":\"tasks/send/stream\",\"params\":{" + msg + "}}", -32700,
			"The request body is not valid UTF-8, as JSON text must be (RFC 8259)", nil},
		{"unknown method", PathSeedSend, `{"jsonrpc":"2.0","id":1,"method":"tasks/nope","params":{}}`, -32601,
			`Method not found: "tasks/nope" (/tasks/send serves tasks/send, tasks/get and tasks/cancel)`, nil},
		{"unknown stream method", PathSeedStream, `{"jsonrpc":"2.0","id":1,"method":"tasks/send","params":{}}`, -32601,
			`Method not found: "tasks/send" (/tasks/send/stream serves tasks/send/stream)`, nil},
		{"no params", PathSeedSend, `{"jsonrpc":"2.0","id":1,"method":"tasks/send"}`, -32602, "Missing required parameter: params", nil},
		{"missing message", PathSeedSend, ok(`{"id":"t"}`), -32602, "Missing required parameter: message", nil},
		{"missing message on stream", PathSeedStream, strings.Replace(ok(`{"id":"t"}`), "tasks/send", "tasks/send/stream", 1), -32602, "Missing required parameter: message", nil},
		{"null message", PathSeedSend, ok(`{"message":null}`), -32602, "Missing required parameter: message", nil},
		{"message not an object", PathSeedSend, ok(`{"message":"hi"}`), -32602, `message must be an object, got "hi"`, nil},
		{"missing role", PathSeedSend, ok(`{"message":{"parts":[{"type":"text","text":"hi"}]}}`), -32602, "Missing required parameter: message.role", nil},
		{"agent role", PathSeedSend, ok(`{"message":{"role":"agent","parts":[{"type":"text","text":"hi"}]}}`), -32602, `message.role must be "user", got "agent"`, nil},
		{"no parts", PathSeedSend, ok(`{"message":{"role":"user","parts":[]}}`), -32602, "Missing required parameter: message.parts", nil},
		{"file part", PathSeedSend, ok(`{"message":{"role":"user","parts":[{"type":"file","file":{}}]}}`), -32602,
			`Unsupported part type "file" in message.parts[0]: only "text" parts are accepted`, nil},
		{"empty text", PathSeedSend, ok(`{"message":{"role":"user","parts":[{"type":"text","text":"  "}]}}`), -32602,
			"The message has no text: every message.parts[].text is empty", nil},
		{"id not a string", PathSeedSend, ok(`{"id":5,` + msg + `}`), -32602, "id must be a string, got 5", nil},
		{"negative historyLength", PathSeedSend, ok(`{"historyLength":-1,` + msg + `}`), -32602, "historyLength must be a non-negative integer, got -1", nil},
		{"mac not a string", PathSeedSend, ok(`{"metadata":{"mac":12},` + msg + `}`), -32602, "metadata.mac must be a string, got float64", nil},
		{"several devices", PathSeedSend, ok(`{` + msg + `}`), -32602,
			"Several devices are registered; name one in metadata.mac: aa:aa:aa:aa:aa:aa, bb:bb:bb:bb:bb:bb",
			&fakeRunner{err: &agent.DeviceChoiceError{MACs: []string{"aa:aa:aa:aa:aa:aa", "bb:bb:bb:bb:bb:bb"}}}},
		{"unknown device", PathSeedSend, ok(`{"metadata":{"mac":"cc:cc:cc:cc:cc:cc"},` + msg + `}`), -32602,
			"No device cc:cc:cc:cc:cc:cc is registered; registered: aa:aa:aa:aa:aa:aa",
			&fakeRunner{err: &agent.DeviceChoiceError{Asked: "cc:cc:cc:cc:cc:cc", MACs: []string{"aa:aa:aa:aa:aa:aa"}}}},
		{"no device", PathSeedSend, ok(`{` + msg + `}`), -32602, "No device is registered with the server; connect one first", &fakeRunner{err: agent.ErrNoDevice}},
		{"get unknown task", PathSeedSend, `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"nope"}}`, -32602, "Unknown task id: nope", nil},
		{"get without id", PathSeedSend, `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{}}`, -32602, "Missing required parameter: id", nil},
		{"cancel unknown task", PathSeedSend, `{"jsonrpc":"2.0","id":1,"method":"tasks/cancel","params":{"id":"nope"}}`, -32602, "Unknown task id: nope", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := tc.runner
			if run == nil {
				run = &fakeRunner{chunks: replyChunks}
			}
			ts := newTestServer(t, run, "", nil)
			body, status := post(t, ts.URL+tc.path, tc.body)
			if status != http.StatusOK {
				t.Errorf("HTTP status %d", status)
			}
			if !utf8.ValidString(body) || !json.Valid([]byte(body)) {
				t.Errorf("the answer is not JSON text (RFC 8259 wants UTF-8): %q", body)
			}
			var r rpcReply
			if err := json.Unmarshal([]byte(body), &r); err != nil || r.Error == nil {
				t.Fatalf("not a JSON-RPC error: %s", body)
			}
			if r.Error.Code != tc.code || r.Error.Message != messages[tc.code] || r.Error.Data == nil || r.Error.Data.Details != tc.details {
				t.Errorf("got %s\nwant code %d %q details %q", body, tc.code, messages[tc.code], tc.details)
			}
			// Still serving.
			if body, _ := post(t, ts.URL+PathSeedSend, ok(`{`+msg+`}`)); tc.runner == nil && !strings.Contains(body, `"state":"completed"`) {
				t.Errorf("after the error, a good send got %s", body)
			}
		})
	}
}

func TestSeedGetUnknownTask(t *testing.T) {
	ts := newTestServer(t, &fakeRunner{}, "", nil)
	body, code := get(t, ts.URL+"/tasks/nope")
	if code != http.StatusNotFound {
		t.Errorf("status %d", code)
	}
	want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32602,"message":"Invalid parameters","data":{"details":"Unknown task id: nope"}}}` + "\n"
	if body != want {
		t.Errorf("got  %s\nwant %s", body, want)
	}
}

func TestSeedInternalError(t *testing.T) {
	ts := newTestServer(t, &fakeRunner{chunks: replyChunks}, "", nil)
	ts.db.Close() // every store call now fails
	body, _ := post(t, ts.URL+PathSeedSend, seedSendBody)
	var r rpcReply
	if err := json.Unmarshal([]byte(body), &r); err != nil || r.Error == nil {
		t.Fatalf("not a JSON-RPC error: %s", body)
	}
	if r.Error.Code != -32603 || r.Error.Message != "Internal error" || !strings.HasPrefix(r.Error.Data.Details, "Could not read task task-id-1: ") {
		t.Errorf("got %s", body)
	}
	if string(r.ID) != `"request-id-1"` {
		t.Errorf("id %s, want the request's", r.ID)
	}
}

func TestSeedCancel(t *testing.T) {
	run := &fakeRunner{block: true, started: make(chan struct{}, 1)}
	ts := newTestServer(t, run, "", nil)
	done := make(chan string, 1)
	go func() {
		body, _ := post(t, ts.URL+PathSeedSend, seedSendBody)
		done <- body
	}()
	<-run.started
	busy, _ := post(t, ts.URL+PathSeedSend, seedSendBody)
	if !strings.Contains(busy, "Task task-id-1 is still working") {
		t.Errorf("a second send to a working task: %s", busy)
	}
	body, _ := post(t, ts.URL+PathSeedSend, `{"jsonrpc":"2.0","id":2,"method":"tasks/cancel","params":{"id":"task-id-1"}}`)
	if !strings.Contains(body, `"state":"canceled"`) {
		t.Errorf("cancel answered %s", body)
	}
	if sent := <-done; !strings.Contains(sent, `"state":"canceled"`) {
		t.Errorf("the canceled send answered %s", sent)
	}
	again, _ := post(t, ts.URL+PathSeedSend, `{"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{"id":"task-id-1"}}`)
	if !bytes.Contains([]byte(again), []byte("Task task-id-1 is canceled and cannot be canceled")) {
		t.Errorf("canceling twice: %s", again)
	}
}

// TestSeedStreamClientGone: a client that hangs up mid-stream does not cut the task short; it
// completes and is stored.
func TestSeedStreamClientGone(t *testing.T) {
	run := &fakeRunner{chunks: replyChunks, gate: make(chan struct{}), started: make(chan struct{}, 1)}
	ts := newTestServer(t, run, "", nil)
	ctx, hangUp := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+PathSeedStream,
		strings.NewReader(strings.Replace(seedSendBody, `"tasks/send"`, `"tasks/send/stream"`, 1)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	<-run.started
	ts.h.exec.turns.mu.Lock()
	turn := ts.h.exec.turns.byID["task-id-1"]
	ts.h.exec.turns.mu.Unlock()
	if turn == nil {
		t.Fatal("no running turn for task-id-1")
	}
	hangUp()
	resp.Body.Close()
	close(run.gate)
	<-turn.done
	body, _ := get(t, ts.URL+"/tasks/task-id-1")
	if !strings.Contains(body, `"state":"completed"`) || !strings.Contains(body, "好的，音量已调到30。") {
		t.Errorf("after the client hung up: %s", body)
	}
}

func TestHandles(t *testing.T) {
	ts := newTestServer(t, &fakeRunner{}, "", nil)
	for path, want := range map[string]bool{
		"/": false, "/xiaozhi/v1/": false, "/ws": false,
		PathAgentCard: true, PathSeedCard: true, "/tasks/abc": true,
	} {
		r, _ := http.NewRequest("GET", "http://x"+path, nil)
		if got := ts.h.Handles(r); got != want {
			t.Errorf("Handles(GET %s) = %v, want %v", path, got, want)
		}
	}
	for _, path := range []string{PathJSONRPC, PathJSONRPCv03, PathSeedSend, PathSeedStream} {
		r, _ := http.NewRequest("POST", "http://x"+path, nil)
		if !ts.h.Handles(r) {
			t.Errorf("Handles(POST %s) = false", path)
		}
	}
}

// TestSeedContinueTask: a second tasks/send to a finished task adds a turn to it, in its session.
func TestSeedContinueTask(t *testing.T) {
	run := &fakeRunner{chunks: replyChunks}
	ts := newTestServer(t, run, "", nil)
	post(t, ts.URL+PathSeedSend, seedSendBody)
	body, _ := post(t, ts.URL+PathSeedSend, strings.Replace(seedSendBody, "把音量调到30", "大声一点", 1))
	var r struct {
		Result seedTask `json:"result"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Result.History) != 4 || r.Result.History[2].Parts[0].Text != "大声一点" || len(r.Result.Artifacts) != 2 {
		t.Errorf("continued task: %s", body)
	}
	if reqs := run.requests(); len(reqs) != 2 || reqs[1].SessionID != "session-id-1" {
		t.Errorf("runner requests %+v", reqs)
	}
	other, _ := post(t, ts.URL+PathSeedSend, strings.Replace(seedSendBody, "session-id-1", "session-id-9", 1))
	if !strings.Contains(other, `"details":"Task task-id-1 belongs to session session-id-1, not session-id-9"`) {
		t.Errorf("another session's send: %s", other)
	}
}

// TestSeedIDNotUTF8: a body whose bytes are not UTF-8 is not JSON text (RFC 8259), seed 004's
// "Invalid JSON payload"; its id could not be echoed as JSON text, and any repaired form would
// be another request's id: the answer is -32700 with id null, valid JSON.
func TestSeedIDNotUTF8(t *testing.T) {
	ts := newTestServer(t, &fakeRunner{chunks: replyChunks}, "", nil)
	msg := `"message":{"role":"user","parts":[{"type":"text","text":"hi"}]}`
	for _, tc := range []struct{ path, method, params string }{
		{PathSeedSend, "tasks/send", `{` + msg + `}`},
		{PathSeedSend, "tasks/get", `{"id":"t"}`},
		{PathSeedStream, "tasks/send/stream", `{` + msg + `}`},
	} {
		body, _ := post(t, ts.URL+tc.path, "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\xfe\",\"method\":\""+tc.method+"\",\"params\":"+tc.params+"}")
		var r rpcReply
		if !utf8.ValidString(body) || json.Unmarshal([]byte(body), &r) != nil || r.Error == nil {
			t.Errorf("%s: not a JSON-RPC error in JSON text: %q", tc.method, body)
			continue
		}
		if string(r.ID) != "null" || r.Error.Code != codeParse {
			t.Errorf("%s: id %s, code %d; want null and -32700", tc.method, r.ID, r.Error.Code)
		}
	}
}
