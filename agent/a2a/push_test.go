package a2a

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// pushReceiver is a real HTTP endpoint that hands each push's body and token to the test.
func pushReceiver(t *testing.T) (*httptest.Server, <-chan map[string]any) {
	t.Helper()
	got := make(chan map[string]any, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Errorf("push body is not JSON: %s", b)
		}
		v["token"] = r.Header.Get("A2A-Notification-Token")
		got <- v
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

// A receiver registered for a task gets what Notify says later, as an agent message in a status
// update of that task; the turn knew its task id, to leave with what it set up.
func TestNotifyPushes(t *testing.T) {
	run := &fakeRunner{chunks: replyChunks}
	ts := newTestServer(t, run, "", nil)
	c := newV1Client(t, ts, "")
	res, err := c.SendMessage(t.Context(), userMessage("remind me in 2 seconds to stretch", nil))
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	if reqs := run.requests(); len(reqs) != 1 || reqs[0].TaskID != string(task.ID) {
		t.Fatalf("the turn's request %+v, want TaskID %s", reqs, task.ID)
	}
	// Nobody registered yet: nothing to send, no error.
	if err := ts.h.Notify(t.Context(), string(task.ID), "stretch"); err != nil {
		t.Fatalf("Notify with no receiver: %v", err)
	}
	recv, got := pushReceiver(t)
	if _, err := c.CreateTaskPushConfig(t.Context(), &a2a.PushConfig{TaskID: task.ID, URL: recv.URL, Token: "tok-1"}); err != nil {
		t.Fatalf("registering the receiver: %v", err)
	}
	if err := ts.h.Notify(t.Context(), string(task.ID), "该伸展一下了 (stretch)"); err != nil {
		t.Fatalf("Notify: %v", err)
	}
	push := <-got
	b, _ := json.Marshal(push)
	// The push is A2A 1.0's StreamResponse; a2a-go's decoder refuses one that holds no event, or
	// more than one, and keeps the state and role as the wire spells them.
	var ev a2a.StreamResponse
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatalf("push %s: %v", b, err)
	}
	su, ok := ev.Event.(*a2a.TaskStatusUpdateEvent)
	if !ok || su.TaskID != task.ID || su.Status.State != a2a.TaskStateCompleted || su.Status.Message == nil || su.Status.Message.Role != a2a.MessageRoleAgent ||
		len(su.Status.Message.Parts) != 1 || su.Status.Message.Parts[0].Text() != "该伸展一下了 (stretch)" || push["token"] != "tok-1" {
		t.Errorf("push = %s, want a status update of %s carrying the text from the agent, token tok-1", b, task.ID)
	}
	// A receiver that is gone is Notify's error.
	recv.Close()
	if err := ts.h.Notify(t.Context(), string(task.ID), "again"); err == nil {
		t.Error("Notify to a closed receiver: no error")
	}
}

// The card tells clients that push notifications are on.
func TestCardPushNotifications(t *testing.T) {
	ts := newTestServer(t, &fakeRunner{}, "", nil)
	body, _ := get(t, ts.URL+PathAgentCard)
	var card struct {
		Capabilities struct {
			PushNotifications bool `json:"pushNotifications"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal([]byte(body), &card); err != nil || !card.Capabilities.PushNotifications {
		t.Errorf("card %s: capabilities.pushNotifications not true (%v)", body, err)
	}
}
