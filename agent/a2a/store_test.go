package a2a

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// walFrames returns how many frames the WAL holds (the pages written since it was last reset),
// then checkpoints and empties it (TRUNCATE). SQLite's own checkpoints, every 1000 frames,
// would reset the count; the writes measured here stay below that.
func walFrames(t *testing.T, ts *testServer) int {
	t.Helper()
	var busy, frames, done int
	if err := ts.db.QueryRow(`PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &frames, &done); err != nil {
		t.Fatal(err)
	}
	if err := ts.db.QueryRow(`PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, new(int), new(int)); err != nil {
		t.Fatal(err)
	}
	if busy != 0 {
		t.Fatal("the WAL could not be emptied: a reader or writer is still busy")
	}
	return frames
}

// A reply streamed in many pieces writes its task a few times (created, working, completed),
// not once per piece: the pages written do not grow with the reply.
func TestStreamedReplyWritesPerStateChange(t *testing.T) {
	chunks := make([]string, 100)
	for i := range chunks {
		chunks[i] = fmt.Sprintf("piece %d; ", i)
	}
	ts := newTestServer(t, &fakeRunner{chunks: chunks}, "", nil)
	c := newV1Client(t, ts, "")
	// The first send creates the tables' pages and prepares the writer's statements.
	if _, err := c.SendMessage(t.Context(), userMessage("warm up", nil)); err != nil {
		t.Fatal(err)
	}
	walFrames(t, ts)
	res, err := c.SendMessage(t.Context(), userMessage("a long answer please", nil))
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	if got, want := artifactText(task), strings.Join(chunks, ""); task.Status.State != a2a.TaskStateCompleted || got != want {
		t.Fatalf("task %s, artifact %q, want completed with %q", task.Status.State, got, want)
	}
	// Three commits of a task row, its indexes and the table's root: about a dozen pages.
	// Written per piece, it was over 300.
	if n := walFrames(t, ts); n > 30 {
		t.Errorf("a 100-piece reply wrote %d WAL frames, want at most 30 (a write per state change)", n)
	}
	// The stored task is the whole reply.
	got, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	if artifactText(got) != strings.Join(chunks, "") {
		t.Errorf("stored artifact %q", artifactText(got))
	}
}

// While a turn runs, GetTask and ListTasks show the pieces streamed so far, which are kept in
// memory until the task's state changes.
func TestRunningTaskShowsPieces(t *testing.T) {
	run := &fakeRunner{chunks: []string{"one ", "two "}, gate: make(chan struct{}), started: make(chan struct{}, 1)}
	ts := newTestServer(t, run, "", nil)
	c := newV1Client(t, ts, "")
	done := make(chan error, 1)
	go func() {
		_, err := c.SendMessage(t.Context(), userMessage("count", nil))
		done <- err
	}()
	<-run.started
	// a2a-go stores the task and its pieces after the executor yields them: wait for both.
	var listed *a2a.Task
	for deadline := time.Now().Add(10 * time.Second); ; {
		list, err := c.ListTasks(t.Context(), &a2a.ListTasksRequest{IncludeArtifacts: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Tasks) == 1 && artifactText(list.Tasks[0]) == "one two " {
			listed = list.Tasks[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ListTasks after 10s: %d tasks, want 1 with the artifact %q", len(list.Tasks), "one two ")
		}
	}
	if listed.Status.State != a2a.TaskStateWorking {
		t.Errorf("listed %s, want working", listed.Status.State)
	}
	got, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: listed.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.State != a2a.TaskStateWorking || artifactText(got) != "one two " {
		t.Errorf("GetTask: %s with %q, want working with %q", got.Status.State, artifactText(got), "one two ")
	}
	close(run.gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
