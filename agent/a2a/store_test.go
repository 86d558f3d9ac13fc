package a2a

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/devicectl/devicectl/agent/store"
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

// A table at agent.tasks.keep.count deletes its oldest finished tasks in batches of a percent,
// never holds more than the count, keeps a running task however old, and finds the oldest
// through the index rather than by sorting the table.
func TestPruneCountInBatches(t *testing.T) {
	const keep = 500 // a batch of 5
	db := openDB(t, filepath.Join(t.TempDir(), "tasks.db"))
	defer db.Close()
	clock := newFixedClock()
	s, err := newSQLTaskStore(t.Context(), db, "test", clock.Now, 0, keep, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	task := func(id string, state a2a.TaskState) *a2a.Task {
		return &a2a.Task{ID: a2a.TaskID(id), ContextID: "c", Status: a2a.TaskStatus{State: state}}
	}
	if _, err := s.Create(t.Context(), task("running", a2a.TaskStateWorking)); err != nil {
		t.Fatal(err)
	}
	const created = 600
	var rows []int
	writes := s.w.writes.Load()
	for i := range created {
		if _, err := s.Create(t.Context(), task(fmt.Sprintf("t%03d", i), a2a.TaskStateCompleted)); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, storedRows(t, db))
	}
	for i, n := range rows {
		if n > keep {
			t.Fatalf("after task %d: %d rows, want at most %d", i, n, keep)
		}
	}
	// With the running task, the 500th finished one is the 501st row: the oldest finished go
	// down to 495 rows, and the new one makes 496.
	if got := rows[keep-1]; got != keep-pruneBatch(keep)+1 {
		t.Errorf("after the task past the count: %d rows, want %d", got, keep-pruneBatch(keep)+1)
	}
	deletes := s.w.writes.Load() - writes - created
	if max := int64((created+1-keep)/pruneBatch(keep)) + 1; deletes > max {
		t.Errorf("%d deletions for %d tasks past the count, want at most %d (batches of %d)", deletes, created+1-keep, max, pruneBatch(keep))
	}
	// The running task is the oldest and stays; of the finished, the oldest went.
	for id, want := range map[string]bool{"running": true, "t000": false, "t099": false, "t599": true} {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM a2a_tasks WHERE id = ?`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if got := n == 1; got != want {
			t.Errorf("task %s stored %v, want %v", id, got, want)
		}
	}
	// The plan reads the oldest off the index; a sort of the whole table (TEMP B-TREE) was what
	// made each pruning cost a scan of every task.
	plan, err := db.Query(`EXPLAIN QUERY PLAN `+pruneCountQuery, slices.Concat(finishedStates, []any{1})...)
	if err != nil {
		t.Fatal(err)
	}
	defer plan.Close()
	var steps []string
	for plan.Next() {
		var id, parent, unused int
		var detail string
		if err := plan.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		steps = append(steps, detail)
	}
	if all := strings.Join(steps, "; "); strings.Contains(all, "TEMP B-TREE") || !strings.Contains(all, "a2a_tasks_updated") {
		t.Errorf("pruning's plan: %s; want the index a2a_tasks_updated and no sort", all)
	}
}

func storedRows(t *testing.T, db *store.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM a2a_tasks`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
