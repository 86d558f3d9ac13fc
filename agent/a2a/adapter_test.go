package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/tools"
)

// refusingRunner replies "ok" to every text but refuse, which it refuses for want of a device,
// as *agent.Agent does before the turn starts.
type refusingRunner struct{ refuse string }

func (r refusingRunner) Turn(_ context.Context, req agent.Request) iter.Seq[agent.Event] {
	return func(yield func(agent.Event) bool) {
		if req.Text == r.refuse {
			yield(agent.Event{Kind: agent.EventError, Err: &agent.DeviceChoiceError{Asked: "cc", MACs: []string{"aa"}}})
			return
		}
		if yield(agent.Event{Kind: agent.EventStarted}) {
			yield(agent.Event{Kind: agent.EventFinal, Text: "ok"})
		}
	}
}

func (refusingRunner) Tools(string) []tools.Declaration { return nil }

// A tasks/send the agent refuses answers -32602 and leaves the task as it was: a new one not
// stored, a finished one it would have continued unchanged.
func TestSeedRefusedSendPutBack(t *testing.T) {
	ts := newTestServer(t, refusingRunner{refuse: "no"}, "", nil)
	const want = "No device cc is registered; registered: aa"
	refused := func(id string) {
		t.Helper()
		body, _ := post(t, ts.URL+PathSeedSend, sendBody("tasks/send", id, "no"))
		var r rpcReply
		if err := json.Unmarshal([]byte(body), &r); err != nil || r.Error == nil || r.Error.Code != codeInvalidParams || r.Error.Data.Details != want {
			t.Fatalf("refused send to %s: %s, want -32602 %q", id, body, want)
		}
	}

	refused("new")
	if body, code := get(t, ts.URL+"/tasks/new"); code != http.StatusNotFound {
		t.Errorf("a refused new task is stored: %d %s", code, body)
	}

	if body, _ := post(t, ts.URL+PathSeedSend, sendBody("tasks/send", "old", "hi")); !strings.Contains(body, `"state":"completed"`) {
		t.Fatalf("first send: %s", body)
	}
	before, _ := get(t, ts.URL+"/tasks/old")
	refused("old")
	if after, _ := get(t, ts.URL+"/tasks/old"); after != before {
		t.Errorf("a refused send changed its task:\nbefore %s\n after %s", before, after)
	}
	// And it takes the next message as if the refused one had not been.
	body, _ := post(t, ts.URL+PathSeedSend, sendBody("tasks/send", "old", "again"))
	var r struct{ Result seedTask }
	if err := json.Unmarshal([]byte(body), &r); err != nil || r.Result.Status.State != stateCompleted || len(r.Result.History) != 4 ||
		r.Result.History[2].Parts[0].Text != "again" {
		t.Errorf("the send after the refused one: %s", body)
	}
}

// Close ends the turns still running on both doors failed, says why, and returns once their
// tasks are stored; the seed send that waited answers its task.
func TestCloseEndsTurns(t *testing.T) {
	// A chunk first: an A2A task exists once the turn's first event is out (see startTurn).
	run := &fakeRunner{chunks: []string{"thinking"}, block: true, started: make(chan struct{}, 2)}
	ts := newTestServer(t, run, "", nil)
	seed := make(chan string, 1)
	go func() {
		body, _ := post(t, ts.URL+PathSeedSend, sendBody("tasks/send", "seed-task", "wait"))
		seed <- body
	}()
	<-run.started
	var a2aID a2a.TaskID
	for ev, err := range newV1Client(t, ts, "").SendStreamingMessage(t.Context(), userMessage("wait", nil)) {
		if err != nil {
			t.Fatal(err)
		}
		if s, ok := ev.(*a2a.TaskStatusUpdateEvent); ok && s.Status.State == a2a.TaskStateWorking {
			a2aID = s.TaskID
			break
		}
	}
	<-run.started

	if err := ts.h.Close(); err != nil {
		t.Fatal(err)
	}
	const why = "The server is shutting down"
	if body := <-seed; !strings.Contains(body, `"state":"failed"`) || !strings.Contains(body, why) {
		t.Errorf("the waiting seed send answered %s", body)
	}
	// The store is closed for writes, not for reads: both outcomes are in the database.
	for _, id := range []a2a.TaskID{"seed-task", a2aID} {
		var state, task string
		if err := ts.db.QueryRow(`SELECT state, task FROM a2a_tasks WHERE id = ?`, string(id)).Scan(&state, &task); err != nil {
			t.Fatal(err)
		}
		if state != string(a2a.TaskStateFailed) || !strings.Contains(task, why) {
			t.Errorf("task %s after Close: %s %s", id, state, task)
		}
	}
	_, err := newV1Client(t, ts, "").SendMessage(t.Context(), userMessage("later", nil))
	if !errors.Is(err, a2a.ErrServerError) && (err == nil || !strings.Contains(err.Error(), "shutting down")) {
		t.Errorf("a message after Close: %v, want it refused", err)
	}
}

// agent.limits.message_bytes holds on the A2A paths too, before anything is stored.
func TestA2AMessageBytes(t *testing.T) {
	run := &fakeRunner{chunks: replyChunks}
	ts := newTestServer(t, run, "", func(o *Options) { o.MessageBytes = 10 })
	_, err := newV1Client(t, ts, "").SendMessage(t.Context(), userMessage(strings.Repeat("a", 11), nil))
	var ae *a2a.Error
	const want = "The message's text is 11 bytes; agent.limits.message_bytes is 10"
	if !errors.Is(err, a2a.ErrInvalidRequest) || !errors.As(err, &ae) || ae.Details["details"] != want {
		t.Errorf("an A2A message past the limit: %v, want -32600 with %q", err, want)
	}
	if n := len(run.requests()); n != 0 {
		t.Errorf("the runner got %d turns", n)
	}
	if l, err := ts.h.a2a.List(t.Context(), &a2a.ListTasksRequest{}); err != nil || len(l.Tasks) != 0 {
		t.Errorf("tasks stored: %v %v", l, err)
	}
}
