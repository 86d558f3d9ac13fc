package seedtask

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// task is a completed seed 004 task, as the seed prints one.
const task = `{"id":"task-1","sessionId":"s-1","status":{"state":"completed",` +
	`"message":{"role":"agent","parts":[{"type":"text","text":"done"}]},"timestamp":"2025-01-01T00:00:00Z"},` +
	`"artifacts":[{"parts":[{"type":"text","text":"好的，"},{"type":"text","text":"音量调到30了。"}]}],"history":[],"metadata":{}}`

// completed is the answer to a tasks/send with the call's id.
func completed(rpcID string) string {
	return `{"jsonrpc":"2.0","id":"` + rpcID + `","result":` + task + `}`
}

// server answers GET /tasks/task-1 with task, and each call as answer says once it checked the
// call is seed 004's.
func server(t *testing.T, answer func(w http.ResponseWriter, rpcID string)) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			io.WriteString(w, task)
			return
		}
		var call struct {
			JSONRPC, ID, Method string
			Params              struct {
				ID, SessionID string
				Message       struct {
					Role  string
					Parts []Part
				}
				Metadata map[string]string
			}
		}
		if err := json.NewDecoder(r.Body).Decode(&call); err != nil || r.Header.Get("Content-Type") != "application/json" ||
			call.JSONRPC != "2.0" || "/"+call.Method != r.URL.Path || call.Params.ID != "task-1" || call.Params.SessionID != "s-1" ||
			call.Params.Message.Role != "user" || len(call.Params.Message.Parts) != 1 || call.Params.Message.Parts[0] != (Part{"text", "音量调到30"}) ||
			call.Params.Metadata["mac"] != "02-00-00-00-00-01" {
			t.Errorf("the call %s %s: %+v, %v", r.Method, r.URL.Path, call, err)
		}
		answer(w, call.ID)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

var request = Request{ID: "task-1", SessionID: "s-1", Text: "音量调到30", Metadata: map[string]string{"mac": "02-00-00-00-00-01"}}

func TestSendGetStream(t *testing.T) {
	base := server(t, func(w http.ResponseWriter, rpcID string) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, completed(rpcID))
	})
	sent, err := Send(t.Context(), nil, base, request)
	if err != nil {
		t.Fatal(err)
	}
	if sent.ID != "task-1" || sent.SessionID != "s-1" || sent.Status.State != "completed" || sent.Why() != "done" || sent.Reply() != "好的，音量调到30了。" {
		t.Errorf("Send = %+v (why %q, reply %q)", sent, sent.Why(), sent.Reply())
	}
	if got, err := Get(t.Context(), nil, base, "task-1"); err != nil || got.Reply() != sent.Reply() || got.Status.State != "completed" {
		t.Errorf("Get = %+v, %v", got, err)
	}
	if got, err := Get(t.Context(), nil, base, "task-2"); err == nil {
		t.Errorf("Get of another task than the server answered = %+v, no error", got)
	}
}

// Each of these answers is wrong on the wire; Send says so rather than return a task.
func TestSendRefusesWrongAnswers(t *testing.T) {
	for name, answer := range map[string]func(w http.ResponseWriter, rpcID string){
		"not JSON": func(w http.ResponseWriter, _ string) { io.WriteString(w, "<html>") },
		"JSON-RPC error": func(w http.ResponseWriter, id string) {
			io.WriteString(w, `{"jsonrpc":"2.0","id":"`+id+`","error":{"code":-32600}}`)
		},
		"the task's id": func(w http.ResponseWriter, _ string) { io.WriteString(w, completed("task-1")) },
		"no jsonrpc": func(w http.ResponseWriter, id string) {
			io.WriteString(w, strings.Replace(completed(id), `"jsonrpc":"2.0",`, "", 1))
		},
		"a result with 500": func(w http.ResponseWriter, id string) { w.WriteHeader(500); io.WriteString(w, completed(id)) },
	} {
		t.Run(name, func(t *testing.T) {
			if got, err := Send(t.Context(), nil, server(t, answer), request); err == nil {
				t.Errorf("Send = %+v, no error", got)
			}
		})
	}
}

func TestStream(t *testing.T) {
	base := server(t, func(w http.ResponseWriter, _ string) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, ": hello\n\ndata: {\"id\":\"task-1\",\"status\":{\"state\":\"working\"}}\n\ndata: {\"final\":true}\n\n")
	})
	first, rest, err := Stream(t.Context(), nil, base, request)
	if err != nil {
		t.Fatal(err)
	}
	defer rest.Close()
	if !strings.HasPrefix(first, "data: ") || !strings.Contains(first, `"working"`) {
		t.Errorf("the first event: %q", first)
	}
	if b, err := io.ReadAll(rest); err != nil || string(b) != "\ndata: {\"final\":true}\n\n" {
		t.Errorf("the rest of the stream: %q, %v", b, err)
	}

	empty := server(t, func(http.ResponseWriter, string) {})
	if first, _, err := Stream(t.Context(), nil, empty, request); err == nil {
		t.Errorf("a stream with no event: first %q, no error", first)
	}
}
