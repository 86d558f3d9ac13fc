package a2a

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/devicectl/devicectl/agent/store/storetest"
)

// listAnswer is ListTasks' result on the wire.
type listAnswer struct {
	Tasks         []*a2a.Task `json:"tasks"`
	TotalSize     int         `json:"totalSize"`
	PageSize      int         `json:"pageSize"`
	NextPageToken string      `json:"nextPageToken"`
}

// listTasks posts ListTasks with params and returns the raw answer and, when it is a result, the
// result.
func listTasks(t *testing.T, ts *testServer, params string) (httpResult, rpcAnswer, *listAnswer) {
	t.Helper()
	res := postRaw(t, ts.URL+PathJSONRPC, `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":`+params+`}`)
	a := decodeAnswer(t, params, res)
	if a.Error != nil {
		return res, a, nil
	}
	var l listAnswer
	if err := json.Unmarshal(a.Result, &l); err != nil {
		t.Fatalf("ListTasks %s: %v: %s", params, err, res.body)
	}
	return res, a, &l
}

func sendTexts(t *testing.T, ts *testServer, texts ...string) []*a2a.Task {
	t.Helper()
	c := newV1Client(t, ts, "")
	var tasks []*a2a.Task
	for _, text := range texts {
		res, err := c.SendMessage(t.Context(), userMessage(text, nil))
		if err != nil {
			t.Fatal(err)
		}
		tasks = append(tasks, res.(*a2a.Task))
	}
	return tasks
}

func taskIDs(tasks []*a2a.Task) string {
	var ids []string
	for _, t := range tasks {
		ids = append(ids, string(t.ID))
	}
	return strings.Join(ids, ",")
}

// TestListTasksParams: ListTasks as a2a.proto's ListTasksRequest says: filters (status,
// statusTimestampAfter), an empty list as [], and every bad parameter -32602 with details.
func TestListTasksParams(t *testing.T) {
	ts := newTestServer(t, &fakeRunner{chunks: replyChunks}, "", nil)
	tasks := sendTexts(t, ts, "one", "two")
	cut := time.Now()
	tasks = append(tasks, sendTexts(t, ts, "three")...)
	all := taskIDs([]*a2a.Task{tasks[2], tasks[1], tasks[0]}) // most recently updated first

	for _, tc := range []struct {
		params, want string
	}{
		{`{}`, all},
		{`null`, all},
		{`{"status":"UNRECOGNIZED","pageSize":50}`, all}, // what @a2a-js/sdk 1.3.0 sends when given no status
		{`{"status":"TASK_STATE_UNSPECIFIED"}`, all},
		{`{"status":null,"historyLength":null,"pageToken":null}`, all},
		{`{"status":"TASK_STATE_COMPLETED"}`, all},
		{`{"status":"TASK_STATE_WORKING"}`, ""},
		{`{"contextId":"` + tasks[1].ContextID + `"}`, string(tasks[1].ID)},
		{`{"contextId":"no-such-context"}`, ""},
		{`{"statusTimestampAfter":"` + cut.Format(time.RFC3339Nano) + `"}`, string(tasks[2].ID)},
		{`{"statusTimestampAfter":"` + time.Now().Add(time.Hour).Format(time.RFC3339) + `"}`, ""},
	} {
		res, a, l := listTasks(t, ts, tc.params)
		if l == nil {
			t.Errorf("ListTasks %s: %s", tc.params, res.body)
			continue
		}
		if got := taskIDs(l.Tasks); got != tc.want {
			t.Errorf("ListTasks %s: tasks %s, want %s", tc.params, got, tc.want)
		}
		if l.TotalSize != len(l.Tasks) || l.PageSize != 50 || l.NextPageToken != "" {
			t.Errorf("ListTasks %s: total %d, page size %d, next %q; want %d, 50 (unset), none", tc.params, l.TotalSize, l.PageSize, l.NextPageToken, len(l.Tasks))
		}
		if tc.want == "" && !strings.Contains(string(a.Result), `"tasks":[]`) {
			t.Errorf("ListTasks %s: an empty list must be [], got %s", tc.params, a.Result)
		}
	}

	// historyLength 0 lists no messages; artifacts only when asked.
	_, _, l := listTasks(t, ts, `{"historyLength":0}`)
	if l == nil || len(l.Tasks) != 3 || len(l.Tasks[0].History) != 0 || len(l.Tasks[0].Artifacts) != 0 {
		t.Errorf("historyLength 0: %+v", l)
	}
	_, _, l = listTasks(t, ts, `{"historyLength":1,"includeArtifacts":true}`)
	if l == nil || len(l.Tasks) != 3 || len(l.Tasks[0].History) != 1 || artifactText(l.Tasks[0]) != "好的，音量已调到30。" {
		t.Errorf("historyLength 1 with artifacts: %+v", l)
	}

	for _, tc := range []struct{ params, details string }{
		{`{"pageSize":0}`, "pageSize must be from 1 to 100 (unset: 50), got 0"},
		{`{"pageSize":101}`, "pageSize must be from 1 to 100 (unset: 50), got 101"},
		{`{"pageSize":-1}`, "pageSize must be from 1 to 100 (unset: 50), got -1"},
		{`{"pageSize":2.5}`, "pageSize must be a whole number, got 2.5"},
		{`{"pageSize":"2"}`, `pageSize must be a whole number, got "2"`},
		{`{"pageToken":"abc"}`, `pageToken "abc" is not one this server gave: pass the nextPageToken of the previous page`},
		{`{"pageToken":5}`, "pageToken has the wrong type: 5"},
		{`{"status":"TASK_STATE_BOGUS"}`, `status must be one of TASK_STATE_SUBMITTED, TASK_STATE_WORKING, TASK_STATE_INPUT_REQUIRED, TASK_STATE_AUTH_REQUIRED, TASK_STATE_COMPLETED, TASK_STATE_FAILED, TASK_STATE_CANCELED, TASK_STATE_REJECTED, got "TASK_STATE_BOGUS"`},
		{`{"status":"completed"}`, `status must be one of TASK_STATE_SUBMITTED, TASK_STATE_WORKING, TASK_STATE_INPUT_REQUIRED, TASK_STATE_AUTH_REQUIRED, TASK_STATE_COMPLETED, TASK_STATE_FAILED, TASK_STATE_CANCELED, TASK_STATE_REJECTED, got "completed"`},
		{`{"historyLength":-1}`, "historyLength must be 0 or more (unset: the whole history), got -1"},
		{`{"statusTimestampAfter":"yesterday"}`, `statusTimestampAfter must be an RFC 3339 timestamp such as "2023-10-27T10:00:00Z", got "yesterday"`},
		{`{"statusTimestampAfter":12}`, `statusTimestampAfter must be an RFC 3339 timestamp such as "2023-10-27T10:00:00Z", got 12`},
		{`{"includeArtifacts":"yes"}`, `includeArtifacts has the wrong type: "yes"`},
		{`[1]`, "params must be an object"},
	} {
		res, a, _ := listTasks(t, ts, tc.params)
		if a.Error == nil || a.Error.Code != -32602 || a.details() != tc.details {
			t.Errorf("ListTasks %s\n got %s\nwant -32602 with details %q", tc.params, res.body, tc.details)
		}
	}
}

// TestListTasksPages: pages follow one another without gaps or repeats, the default page is 50
// tasks, and a page token stays good while newer tasks arrive.
func TestListTasksPages(t *testing.T) {
	storetest.Each(t, listTasksPages)
}

func listTasksPages(t *testing.T, where string) {
	ts := newTestServer(t, &fakeRunner{chunks: replyChunks}, where, nil)
	for i := range 53 {
		task := &a2a.Task{ID: a2a.TaskID(fmt.Sprintf("task-%02d", i)), ContextID: "ctx", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}}
		if _, err := ts.h.a2a.Create(t.Context(), task); err != nil {
			t.Fatal(err)
		}
	}
	_, _, l := listTasks(t, ts, `{}`)
	if l == nil || len(l.Tasks) != 50 || l.TotalSize != 53 || l.NextPageToken == "" || l.Tasks[0].ID != "task-52" {
		t.Fatalf("unset page size: %d tasks of %d, next %q, want 50 of 53 newest first and a token", len(l.Tasks), l.TotalSize, l.NextPageToken)
	}

	var seen []string
	token := ""
	for page := 0; ; page++ {
		params := `{"pageSize":20}`
		if token != "" {
			params = `{"pageSize":20,"pageToken":"` + token + `"}`
		}
		res, _, l := listTasks(t, ts, params)
		if l == nil {
			t.Fatalf("page %d: %s", page, res.body)
		}
		for _, task := range l.Tasks {
			seen = append(seen, string(task.ID))
		}
		if want := min(53+page, 54); l.TotalSize != want {
			t.Errorf("page %d: total %d, want %d", page, l.TotalSize, want)
		}
		if page == 0 {
			// A task that arrives meanwhile does not shift the pages that follow.
			if _, err := ts.h.a2a.Create(t.Context(), &a2a.Task{ID: "late", ContextID: "ctx", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}}); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if _, _, l := listTasks(t, ts, `{"pageSize":1}`); l == nil || len(l.Tasks) != 1 || l.Tasks[0].ID != "late" {
					t.Errorf("the newest task is not listed first: %+v", l)
				}
			}()
		}
		if token = l.NextPageToken; token == "" {
			break
		}
		if page > 5 {
			t.Fatal("the pages do not end")
		}
	}
	var want []string
	for i := 52; i >= 0; i-- {
		want = append(want, fmt.Sprintf("task-%02d", i))
	}
	if got := strings.Join(seen, ","); got != strings.Join(want, ",") {
		t.Errorf("paged through\n %s\nwant\n %s", got, strings.Join(want, ","))
	}
}

// manualClock is a clock that moves only when told.
type manualClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *manualClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// TestTasksPruned: past agent.tasks.keep.count the oldest finished tasks go, past
// agent.tasks.keep.age the old finished ones; a running task stays whatever its age. A restart
// with a smaller limit prunes at once.
func TestTasksPruned(t *testing.T) {
	storetest.Each(t, tasksPruned)
}

func tasksPruned(t *testing.T, where string) {
	clock := &manualClock{t: time.Date(2023, 4, 1, 12, 0, 0, 0, time.UTC)}
	run := &fakeRunner{chunks: replyChunks, blockOn: "think hard", started: make(chan struct{}, 1)}
	ts := newTestServer(t, run, where, func(o *Options) {
		o.Now, o.TasksKeepAge, o.TasksKeepCount = clock.Now, time.Hour, 3
	})
	listed := func() string {
		t.Helper()
		l, err := ts.h.a2a.List(t.Context(), &a2a.ListTasksRequest{HistoryLength: new(int)})
		if err != nil {
			t.Fatal(err)
		}
		var texts []string
		for _, task := range l.Tasks {
			st, _ := ts.h.a2a.Get(t.Context(), task.ID)
			texts = append(texts, st.Task.History[0].Parts[0].Text())
		}
		return strings.Join(texts, ",")
	}

	c := newV1Client(t, ts, "")
	var blocked a2a.TaskID
	for ev, err := range c.SendStreamingMessage(t.Context(), userMessage("think hard", nil)) {
		if err != nil {
			t.Fatal(err)
		}
		if s, ok := ev.(*a2a.TaskStatusUpdateEvent); ok && s.Status.State == a2a.TaskStateWorking {
			blocked = s.TaskID
			break
		}
	}
	<-run.started
	for _, text := range []string{"q1", "q2", "q3", "q4"} {
		clock.Add(time.Second)
		sendTexts(t, ts, text)
	}
	// Five tasks, three kept: the two oldest finished went, the running one stays.
	if got, want := listed(), "q4,q3,think hard"; got != want {
		t.Errorf("past the count: %s, want %s", got, want)
	}

	clock.Add(2 * time.Hour)
	sendTexts(t, ts, "q5")
	if got, want := listed(), "q5,think hard"; got != want {
		t.Errorf("past the age: %s, want %s", got, want)
	}

	clock.Add(time.Second)
	if _, err := c.CancelTask(t.Context(), &a2a.CancelTaskRequest{ID: blocked}); err != nil {
		t.Fatal(err)
	}
	ts.stop()
	ts = newTestServer(t, run, where, func(o *Options) { o.Now, o.TasksKeepCount = clock.Now, 1 })
	if got, want := listed(), "think hard"; got != want { // canceled last, so the most recent
		t.Errorf("after a restart with a count of 1: %s, want %s", got, want)
	}
}
