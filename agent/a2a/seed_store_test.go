package a2a

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// A database from before the seed routes shared the A2A table has its seed tasks moved into it
// at start: the seed routes answer them as before, A2A reads them too, and the old table is gone.
func TestSeedTasksMigrated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.db")
	want, err := os.ReadFile(filepath.Join("testdata", "seed_get.golden"))
	if err != nil {
		t.Fatal(err)
	}
	running := `{"id":"w","sessionId":"s","status":{"state":"working","message":null,"timestamp":"2023-04-01T12:00:05Z"},"artifacts":[],"history":[{"role":"user","parts":[{"type":"text","text":"wait"}]}],"metadata":{}}`
	db := openDB(t, path)
	for _, q := range []string{
		`CREATE TABLE a2a_seed_tasks (id TEXT PRIMARY KEY, state TEXT NOT NULL, updated_ns INTEGER NOT NULL, task TEXT NOT NULL)`,
		`INSERT INTO a2a_seed_tasks VALUES('task-id-2', 'completed', 1680350404000000000, '` + strings.TrimSpace(string(want)) + `')`,
		`INSERT INTO a2a_seed_tasks VALUES('w', 'working', 1680350405000000000, '` + running + `')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	ts := newTestServer(t, &fakeRunner{chunks: replyChunks}, path, nil)
	body, code := get(t, ts.URL+"/tasks/task-id-2")
	if code != http.StatusOK || body != string(want) {
		t.Errorf("GET /tasks/task-id-2 after the migration: %d\n got: %s\nwant: %s", code, body, want)
	}
	// A task the old run left working is failed like any other.
	if body, _ := get(t, ts.URL+"/tasks/w"); !strings.Contains(body, `"state":"failed"`) || !strings.Contains(body, "restarted") {
		t.Errorf("GET /tasks/w: %s, want it failed for the restart", body)
	}
	got, err := newV1Client(t, ts, "").GetTask(t.Context(), &a2a.GetTaskRequest{ID: "task-id-2"})
	if err != nil {
		t.Fatal(err)
	}
	if got.ContextID != "session-id-1" || got.Status.State != a2a.TaskStateCompleted || artifactText(got) != "好的，音量已调到30。" || len(got.History) != 2 {
		t.Errorf("A2A GetTask of the migrated task: %+v", got)
	}
	var n int
	if err := ts.db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'a2a_seed_tasks'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("a2a_seed_tasks still there (%d, %v)", n, err)
	}
	// A second start does not migrate again.
	ts.stop()
	ts = newTestServer(t, &fakeRunner{chunks: replyChunks}, path, nil)
	if body, _ := get(t, ts.URL+"/tasks/task-id-2"); body != string(want) {
		t.Errorf("after a second start: %s", body)
	}
}

// One task, one turn at a time, whichever door: an A2A message to a task whose turn runs on the
// seed routes is refused, and the seed task ends as its own turn says.
func TestA2AMessageToRunningSeedTask(t *testing.T) {
	run := &fakeRunner{chunks: replyChunks, blockOn: "wait", started: make(chan struct{}, 1)}
	ts := newTestServer(t, run, "", nil)
	done := startBlocked(t, ts, run, "x")
	msg := userMessage("hello", nil)
	msg.Message.TaskID = "x"
	_, err := newV1Client(t, ts, "").SendMessage(t.Context(), msg)
	if err == nil || !strings.Contains(err.Error(), "still working") {
		t.Errorf("A2A message to a running seed task: %v, want it refused as still working", err)
	}
	cancelTask(t, ts, "x", done)
	if body, _ := get(t, ts.URL+"/tasks/x"); !strings.Contains(body, `"state":"canceled"`) {
		t.Errorf("the seed task after the refused A2A message: %s", body)
	}
}
