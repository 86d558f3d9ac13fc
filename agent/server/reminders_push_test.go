//go:build !devicectl_omit_serve || !devicectl_omit_sim

package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
)

// A reminder set over A2A pushes to the receivers registered for its task when it comes due:
// "remind me in 2 seconds to stretch", a receiver registered with CreateTaskPushNotificationConfig,
// and about two seconds later the push arrives, as an agent message of that task.
func TestReminderPushesToItsTask(t *testing.T) {
	_, addr := startServer(t, testConfig(t))
	d := startDevice(t, "ws://"+addr, "AA-BB-CC-DD-EE-07", "")
	d.waitRegistered(t)

	pushes := make(chan string, 4)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		pushes <- string(b)
	}))
	defer recv.Close()

	ctx := waitCtx(t)
	card, err := agentcard.DefaultResolver.Resolve(ctx, "http://"+addr)
	if err != nil {
		t.Fatal(err)
	}
	if !card.Capabilities.PushNotifications {
		t.Error("the card does not advertise push notifications")
	}
	c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(&http.Client{Timeout: 10 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Destroy()
	sent := time.Now()
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("remind me in 2 seconds to stretch"))})
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("the reminder's task: %#v", res)
	}
	if _, err := c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: task.ID, URL: recv.URL}); err != nil {
		t.Fatalf("registering the receiver: %v", err)
	}
	select {
	case got := <-pushes:
		if !strings.Contains(got, "stretch") || !strings.Contains(got, string(task.ID)) || !strings.Contains(got, `"statusUpdate"`) {
			t.Errorf("push %s, want a status update of task %s saying the reminder", got, task.ID)
		}
		if heard := time.Since(sent); heard < 1900*time.Millisecond {
			t.Errorf("the push came %v after the reminder was set, want about 2 s", heard)
		}
	case <-ctx.Done():
		t.Fatal("no push within 10 s of the reminder set for 2 s")
	}
}
