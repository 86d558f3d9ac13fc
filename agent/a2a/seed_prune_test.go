package a2a

import (
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// stepClock is a clock that moves only when told.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *stepClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// storedSeedTasks is how many rows the task table (both protocols' tasks) holds.
func storedSeedTasks(t *testing.T, ts *testServer) int {
	t.Helper()
	var n int
	if err := ts.db.QueryRow(`SELECT count(*) FROM a2a_tasks`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// wantTasks checks which of ids are stored.
func wantTasks(t *testing.T, ts *testServer, kept map[string]bool) {
	t.Helper()
	for id, want := range kept {
		_, code := get(t, ts.URL+"/tasks/"+id)
		if got := code == http.StatusOK; got != want {
			t.Errorf("task %s: GET %d, want kept %v", id, code, want)
		}
	}
}

// sendOK runs a tasks/send to a new task id and checks it completed.
func sendOK(t *testing.T, ts *testServer, id string) {
	t.Helper()
	if body, _ := post(t, ts.URL+PathSeedSend, sendBody("tasks/send", id, "hi")); !strings.Contains(body, `"state":"completed"`) {
		t.Fatalf("send %s: %.300s", id, body)
	}
}

// startBlocked starts a send whose turn blocks until the task is canceled; the task stays
// working meanwhile. It returns a channel that gets the send's answer.
func startBlocked(t *testing.T, ts *testServer, run *fakeRunner, id string) <-chan string {
	t.Helper()
	done := make(chan string, 1)
	go func() {
		body, _ := post(t, ts.URL+PathSeedSend, sendBody("tasks/send", id, run.blockOn))
		done <- body
	}()
	<-run.started
	return done
}

func cancelTask(t *testing.T, ts *testServer, id string, done <-chan string) {
	t.Helper()
	post(t, ts.URL+PathSeedSend, `{"jsonrpc":"2.0","id":1,"method":"tasks/cancel","params":{"id":"`+id+`"}}`)
	if body := <-done; !strings.Contains(body, `"state":"canceled"`) {
		t.Errorf("canceled send: %.300s", body)
	}
}

// TestSeedTasksKeepCount: past agent.tasks.keep.count tasks, a new one deletes the oldest
// finished ones; a working task is kept however old.
func TestSeedTasksKeepCount(t *testing.T) {
	run := &fakeRunner{chunks: replyChunks, blockOn: "wait", started: make(chan struct{}, 1)}
	ts := newTestServer(t, run, "", func(o *Options) { o.TasksKeepCount = 2 })
	done := startBlocked(t, ts, run, "w")
	for _, id := range []string{"a", "b", "c"} {
		sendOK(t, ts, id)
	}
	// w, a, b, c: two past the count, and the oldest finished are a and b.
	wantTasks(t, ts, map[string]bool{"w": true, "a": false, "b": false, "c": true})
	// Canceled, w changed last: c is now the oldest finished.
	cancelTask(t, ts, "w", done)
	sendOK(t, ts, "d")
	wantTasks(t, ts, map[string]bool{"c": false, "w": true, "d": true})
	if n := storedSeedTasks(t, ts); n != 2 {
		t.Errorf("%d tasks stored, want 2", n)
	}
	// Another send to a kept task adds no task: nothing is deleted.
	if body, _ := post(t, ts.URL+PathSeedSend, sendBody("tasks/send", "d", "again")); !strings.Contains(body, `"state":"completed"`) {
		t.Errorf("send to d again: %.300s", body)
	}
	wantTasks(t, ts, map[string]bool{"w": true, "d": true})
}

// TestSeedTasksKeepCountRestart: a handler started on a table already past the count prunes
// it at its first new task.
func TestSeedTasksKeepCountRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.db")
	a := newTestServer(t, &fakeRunner{chunks: replyChunks}, path, nil)
	for _, id := range []string{"a", "b", "c", "d"} {
		sendOK(t, a, id)
	}
	a.stop()
	b := newTestServer(t, &fakeRunner{chunks: replyChunks}, path, func(o *Options) { o.TasksKeepCount = 2 })
	sendOK(t, b, "e")
	wantTasks(t, b, map[string]bool{"a": false, "b": false, "c": false, "d": true, "e": true})
}

// TestSeedTasksKeepAge: a new task deletes the finished tasks whose last change is older than
// agent.tasks.keep.age; a working one stays.
func TestSeedTasksKeepAge(t *testing.T) {
	clock := &stepClock{t: time.Date(2023, 4, 1, 12, 0, 0, 0, time.UTC)}
	run := &fakeRunner{chunks: replyChunks, blockOn: "wait", started: make(chan struct{}, 1)}
	ts := newTestServer(t, run, "", func(o *Options) { o.Now = clock.Now; o.TasksKeepAge = time.Hour })
	done := startBlocked(t, ts, run, "w")
	sendOK(t, ts, "a")
	sendOK(t, ts, "b")
	clock.advance(30 * time.Minute)
	sendOK(t, ts, "c")
	wantTasks(t, ts, map[string]bool{"a": true, "b": true, "c": true, "w": true})
	clock.advance(31 * time.Minute)
	sendOK(t, ts, "d")
	wantTasks(t, ts, map[string]bool{"a": false, "b": false, "c": true, "d": true, "w": true})
	cancelTask(t, ts, "w", done)
	clock.advance(2 * time.Hour)
	sendOK(t, ts, "e")
	wantTasks(t, ts, map[string]bool{"c": false, "d": false, "w": false, "e": true})
}
