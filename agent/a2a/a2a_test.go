package a2a

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/agent/store/storetest"
	"github.com/devicectl/devicectl/internal/bearer"
)

// newV1Client resolves the card and connects the way any A2A 1.0 client does.
func newV1Client(t *testing.T, ts *testServer, token string) *a2aclient.Client {
	t.Helper()
	ctx := t.Context()
	card, err := agentcard.DefaultResolver.Resolve(ctx, ts.URL)
	if err != nil {
		t.Fatalf("resolving the card: %v", err)
	}
	hc := &http.Client{Timeout: 10 * time.Second}
	if token != "" {
		hc.Transport = bearer.For(ts.URL, token, nil)
	}
	c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(hc))
	if err != nil {
		t.Fatalf("client from card: %v", err)
	}
	t.Cleanup(func() { c.Destroy() })
	return c
}

// newV03Client talks A2A 0.3 through a2a-go's compat transport, to the 0.3 interface the card lists.
func newV03Client(t *testing.T, ts *testServer) *a2aclient.Client {
	t.Helper()
	ctx := t.Context()
	resolver := &agentcard.Resolver{Client: http.DefaultClient, CardParser: a2av0.NewAgentCardParser()}
	card, err := resolver.Resolve(ctx, ts.URL)
	if err != nil {
		t.Fatalf("resolving the card as 0.3: %v", err)
	}
	var v03 []*a2a.AgentInterface
	for _, i := range card.SupportedInterfaces {
		if i.ProtocolVersion == a2av0.Version {
			v03 = append(v03, i)
		}
	}
	if len(v03) != 1 || v03[0].URL != ts.URL+PathJSONRPCv03 {
		t.Fatalf("0.3 interfaces on the card = %+v, want one at %s", v03, ts.URL+PathJSONRPCv03)
	}
	c, err := a2aclient.NewFromEndpoints(ctx, v03, a2av0.WithJSONRPCTransport(a2av0.JSONRPCTransportConfig{}))
	if err != nil {
		t.Fatalf("0.3 client: %v", err)
	}
	t.Cleanup(func() { c.Destroy() })
	return c
}

func userMessage(text string, meta map[string]any) *a2a.SendMessageRequest {
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
	m.Metadata = meta
	return &a2a.SendMessageRequest{Message: m}
}

func artifactText(task *a2a.Task) string {
	var b strings.Builder
	for _, a := range task.Artifacts {
		for _, p := range a.Parts {
			b.WriteString(p.Text())
		}
	}
	return b.String()
}

func statusText(s a2a.TaskStatus) string {
	if s.Message == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range s.Message.Parts {
		b.WriteString(p.Text())
	}
	return b.String()
}

func TestA2ACard(t *testing.T) {
	ts := newTestServer(t, &fakeRunner{}, "", nil)
	card, err := agentcard.DefaultResolver.Resolve(t.Context(), ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	if !card.Capabilities.Streaming {
		t.Error("card does not say it streams")
	}
	var ids []string
	for _, s := range card.Skills {
		ids = append(ids, s.ID)
	}
	if got, want := strings.Join(ids, ","), "general,amplify_volume,calculate"; got != want {
		t.Errorf("skills = %s, want %s", got, want)
	}
	if len(card.SupportedInterfaces) == 0 || card.SupportedInterfaces[0].URL != ts.URL+PathJSONRPC {
		t.Errorf("interfaces = %+v, want the first at %s", card.SupportedInterfaces, ts.URL+PathJSONRPC)
	}
}

// testSendStreamGetCancel runs the four operations the front door promises through client c.
func testSendStreamGetCancel(t *testing.T, run *fakeRunner, c *a2aclient.Client) {
	ctx := t.Context()

	// send
	res, err := c.SendMessage(ctx, userMessage("把音量调到30", map[string]any{"mac": "aa:bb:cc:dd:ee:ff", "user_id": "user-123"}))
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("send answered %T, want a task", res)
	}
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("send: state %s (%s), want completed", task.Status.State, statusText(task.Status))
	}
	if got := artifactText(task); got != "好的，音量已调到30。" {
		t.Errorf("send: artifact text %q", got)
	}
	if got := statusText(task.Status); got != "好的，音量已调到30。" {
		t.Errorf("send: status message %q", got)
	}
	reqs := run.requests()
	last := reqs[len(reqs)-1]
	if last.Text != "把音量调到30" || last.MAC != "aa:bb:cc:dd:ee:ff" || last.UserID != "user-123" || last.SessionID != task.ContextID {
		t.Errorf("runner got %+v, want the text, mac, user and session %s", last, task.ContextID)
	}

	// stream
	var states []a2a.TaskState
	var chunks []string
	var streamedID a2a.TaskID
	for ev, err := range c.SendStreamingMessage(ctx, userMessage("大声一点", nil)) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		switch ev := ev.(type) {
		case *a2a.Task:
			streamedID = ev.ID
			states = append(states, ev.Status.State)
		case *a2a.TaskStatusUpdateEvent:
			states = append(states, ev.Status.State)
		case *a2a.TaskArtifactUpdateEvent:
			for _, p := range ev.Artifact.Parts {
				chunks = append(chunks, p.Text())
			}
		}
	}
	if got := strings.Join(chunks, "|"); got != "好的，|音量已调到30。" {
		t.Errorf("stream: chunks %q, want each chunk as its own artifact update", got)
	}
	if n := len(states); n < 2 || states[n-1] != a2a.TaskStateCompleted || !containsState(states, a2a.TaskStateWorking) {
		t.Errorf("stream: states %v, want working ... completed", states)
	}

	// get
	got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: streamedID})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if got.Status.State != a2a.TaskStateCompleted || artifactText(got) != "好的，音量已调到30。" {
		t.Errorf("get: %s %q", got.Status.State, artifactText(got))
	}
	if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: "no-such-task"}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("get of an unknown task: %v, want task not found", err)
	}

	// cancel: a turn that waits until it is stopped
	run.block, run.started = true, make(chan struct{}, 1)
	defer func() { run.block, run.started = false, nil }()
	var blockedID a2a.TaskID
	for ev, err := range c.SendStreamingMessage(ctx, userMessage("think hard", nil)) {
		if err != nil {
			t.Fatalf("stream before cancel: %v", err)
		}
		if s, ok := ev.(*a2a.TaskStatusUpdateEvent); ok && s.Status.State == a2a.TaskStateWorking {
			blockedID = s.TaskID
			break
		}
	}
	<-run.started
	canceled, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: blockedID})
	if err != nil {
		t.Fatalf("cancel: %v", err)
	}
	if canceled.Status.State != a2a.TaskStateCanceled {
		t.Errorf("cancel: state %s", canceled.Status.State)
	}
	got, err = c.GetTask(ctx, &a2a.GetTaskRequest{ID: blockedID})
	if err != nil || got.Status.State != a2a.TaskStateCanceled {
		t.Errorf("get after cancel: %v %v", got, err)
	}
}

func containsState(s []a2a.TaskState, want a2a.TaskState) bool {
	for _, v := range s {
		if v == want {
			return true
		}
	}
	return false
}

var replyChunks = []string{"好的，", "音量已调到30。"}

func TestA2A10Client(t *testing.T) {
	run := &fakeRunner{chunks: replyChunks}
	ts := newTestServer(t, run, "", nil)
	testSendStreamGetCancel(t, run, newV1Client(t, ts, ""))
	if n := ts.served("POST", PathJSONRPCv03); n != 0 || ts.served("POST", PathJSONRPC) == 0 {
		t.Errorf("1.0 client: %d requests on %s, %d on %s", ts.served("POST", PathJSONRPC), PathJSONRPC, n, PathJSONRPCv03)
	}
}

func TestA2A03Client(t *testing.T) {
	run := &fakeRunner{chunks: replyChunks}
	ts := newTestServer(t, run, "", nil)
	testSendStreamGetCancel(t, run, newV03Client(t, ts))
	if n := ts.served("POST", PathJSONRPC); n != 0 || ts.served("POST", PathJSONRPCv03) == 0 {
		t.Errorf("0.3 client: %d requests on %s, %d on %s", n, PathJSONRPC, ts.served("POST", PathJSONRPCv03), PathJSONRPCv03)
	}
}

func TestA2ADeviceErrors(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"several", &agent.DeviceChoiceError{MACs: []string{"aa:aa:aa:aa:aa:aa", "bb:bb:bb:bb:bb:bb"}},
			"Several devices are registered; name one in metadata.mac: aa:aa:aa:aa:aa:aa, bb:bb:bb:bb:bb:bb"},
		{"unknown", &agent.DeviceChoiceError{Asked: "cc:cc:cc:cc:cc:cc", MACs: []string{"aa:aa:aa:aa:aa:aa"}},
			"No device cc:cc:cc:cc:cc:cc is registered; registered: aa:aa:aa:aa:aa:aa"},
		{"none", agent.ErrNoDevice, "No device is registered with the server; connect one first"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts := newTestServer(t, &fakeRunner{err: tc.err}, "", nil)
			for name, c := range map[string]*a2aclient.Client{"1.0": newV1Client(t, ts, ""), "0.3": newV03Client(t, ts)} {
				_, err := c.SendMessage(t.Context(), userMessage("笑一个", nil))
				if !errors.Is(err, a2a.ErrInvalidParams) {
					t.Fatalf("%s: send: %v, want invalid params (-32602)", name, err)
				}
				var ae *a2a.Error
				if !errors.As(err, &ae) || ae.Details["details"] != tc.want {
					t.Errorf("%s: details = %v, want %q", name, ae, tc.want)
				}
			}
		})
	}
}

func TestA2ATurnFails(t *testing.T) {
	run := &fakeRunner{chunks: []string{"正在"}, failAfter: agent.ErrDeviceGone}
	ts := newTestServer(t, run, "", nil)
	res, err := newV1Client(t, ts, "").SendMessage(t.Context(), userMessage("把音量调到30", nil))
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	if task.Status.State != a2a.TaskStateFailed || statusText(task.Status) != agent.ErrDeviceGone.Error() {
		t.Errorf("state %s %q, want failed with %q", task.Status.State, statusText(task.Status), agent.ErrDeviceGone)
	}
}

func TestA2ABearerToken(t *testing.T) {
	run := &fakeRunner{chunks: replyChunks}
	ts := newTestServer(t, run, "", func(o *Options) { o.Token = "s3cret" })

	// The cards stay open so that a client can learn how to connect.
	for _, p := range []string{PathAgentCard, PathSeedCard} {
		resp, err := http.Get(ts.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s without a token: %d", p, resp.StatusCode)
		}
	}
	for _, p := range []string{PathJSONRPC, PathJSONRPCv03, PathSeedSend, PathSeedStream} {
		for _, auth := range []string{"", "Bearer wrong", "Bearer s3cret2", "s3cret"} {
			req, _ := http.NewRequest("POST", ts.URL+p, strings.NewReader(`{}`))
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("POST %s with %q: %d, want 401", p, auth, resp.StatusCode)
			}
		}
	}
	resp, err := http.Get(ts.URL + "/tasks/x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /tasks/x without a token: %d, want 401", resp.StatusCode)
	}

	if _, err := newV1Client(t, ts, "").SendMessage(t.Context(), userMessage("hi", nil)); err == nil {
		t.Error("send without the token succeeded")
	}
	res, err := newV1Client(t, ts, "s3cret").SendMessage(t.Context(), userMessage("hi", nil))
	if err != nil {
		t.Fatalf("send with the token: %v", err)
	}
	if res.(*a2a.Task).Status.State != a2a.TaskStateCompleted {
		t.Errorf("send with the token: %+v", res)
	}
}

// TestTasksSurviveRestart stores tasks through handler A, closes it and its database, and reads
// them through handler B on the same database.
func TestTasksSurviveRestart(t *testing.T) {
	storetest.Each(t, tasksSurviveRestart)
}

func tasksSurviveRestart(t *testing.T, where string) {
	run := &fakeRunner{chunks: replyChunks}
	a := newTestServer(t, run, where, nil)
	res, err := newV1Client(t, a, "").SendMessage(t.Context(), userMessage("把音量调到30", nil))
	if err != nil {
		t.Fatal(err)
	}
	id := res.(*a2a.Task).ID
	seedBody := `{"jsonrpc":"2.0","id":"r1","method":"tasks/send","params":{"id":"task-id-1","sessionId":"session-id-1","message":{"role":"user","parts":[{"type":"text","text":"把音量调到30"}]}}}`
	if _, code := post(t, a.URL+PathSeedSend, seedBody); code != http.StatusOK {
		t.Fatalf("seed send: %d", code)
	}
	a.stop()

	b := newTestServer(t, run, where, nil)
	got, err := newV1Client(t, b, "").GetTask(t.Context(), &a2a.GetTaskRequest{ID: id})
	if err != nil {
		t.Fatalf("tasks/get after restart: %v", err)
	}
	if got.Status.State != a2a.TaskStateCompleted || artifactText(got) != "好的，音量已调到30。" {
		t.Errorf("after restart: %s %q", got.Status.State, artifactText(got))
	}
	body, code := get(t, b.URL+"/tasks/task-id-1")
	if code != http.StatusOK || !strings.Contains(body, `"state":"completed"`) || !strings.Contains(body, "音量已调到30") {
		t.Errorf("GET /tasks/task-id-1 after restart: %d %s", code, body)
	}
}

func TestRestartFailsInterruptedTasks(t *testing.T) {
	storetest.Each(t, restartFailsInterruptedTasks)
}

func restartFailsInterruptedTasks(t *testing.T, where string) {
	// A chunk first: the task exists once the turn's first event is out (see startTurn).
	run := &fakeRunner{chunks: []string{"thinking"}, block: true}
	a := newTestServer(t, run, where, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	// The client gives up; the task stays working until the server goes down.
	newV1Client(t, a, "").SendMessage(ctx, userMessage("think hard", nil))
	tasks, err := a.h.a2a.List(t.Context(), &a2a.ListTasksRequest{})
	if err != nil || len(tasks.Tasks) != 1 {
		t.Fatalf("list: %v %v", tasks, err)
	}
	id := tasks.Tasks[0].ID
	if n := taskNode(t, a.db, id); n != a.h.node || n == "" {
		t.Errorf("the task is stored as node %q's; want this process's, %q", n, a.h.node)
	}
	// Simulate a crash: the handler is not closed, only the database.
	a.Server.CloseClientConnections()
	a.Server.Close()
	a.db.Close()

	b := newTestServer(t, &fakeRunner{}, where, nil)
	if b.h.node == a.h.node {
		t.Errorf("two processes are both node %q", a.h.node)
	}
	got, err := newV1Client(t, b, "").GetTask(t.Context(), &a2a.GetTaskRequest{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.State != a2a.TaskStateFailed || !strings.Contains(statusText(got.Status), "restarted") {
		t.Errorf("interrupted task after restart: %s %q", got.Status.State, statusText(got.Status))
	}
	a.h.Close()
}
