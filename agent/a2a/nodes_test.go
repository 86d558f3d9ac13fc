package a2a

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"

	"github.com/devicectl/devicectl/agent/cluster"
	"github.com/devicectl/devicectl/agent/hub"
	"github.com/devicectl/devicectl/agent/store"
	"github.com/devicectl/devicectl/agent/store/storetest"
	"github.com/devicectl/devicectl/internal/testing/natstest"
	"github.com/devicectl/devicectl/internal/testing/poll"
)

// joinCluster starts node name of a cluster on nats, with a hub of its own, until the test ends
// or Close.
func joinCluster(t *testing.T, nats, name string) *cluster.Cluster {
	t.Helper()
	c, err := cluster.New(t.Context(), &cluster.Options{URL: nats, Node: name, TTL: cluster.MinTTL})
	if err != nil {
		t.Fatal(err)
	}
	h := hub.New(&hub.Options{Cluster: c})
	if err := c.Start(t.Context()); err != nil {
		h.Close()
		c.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.Close()
		c.Close()
	})
	return c
}

// startWorking sends a message whose turn runs until the handler closes, and returns its task
// once it is working.
func startWorking(t *testing.T, ts *testServer, run *fakeRunner) a2a.TaskID {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		newV1Client(t, ts, "").SendMessage(ctx, userMessage("think hard", nil))
	}()
	<-run.started
	cancel() // the client gives up; the turn goes on
	<-sent
	var id a2a.TaskID
	poll.Until(t, "a working task", func() bool {
		ts.h.a2a.liveMu.Lock()
		defer ts.h.a2a.liveMu.Unlock()
		for tid, lt := range ts.h.a2a.live {
			if lt.task.Status.State == a2a.TaskStateWorking && lt.stored == a2a.TaskStateWorking {
				id = tid
				return true
			}
		}
		return false
	})
	return id
}

func taskNode(t *testing.T, db *store.DB, id a2a.TaskID) string {
	t.Helper()
	var node string
	if err := db.QueryRow(`SELECT node FROM a2a_tasks WHERE id = ?`, string(id)).Scan(&node); err != nil {
		t.Fatal(err)
	}
	return node
}

func readTask(t *testing.T, ts *testServer, id a2a.TaskID) *a2a.Task {
	t.Helper()
	st, err := ts.h.tasks.Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return st.Task
}

// Nodes of a cluster on one database: a node that starts leaves the tasks of the live nodes
// running and fails those of a node that is not; a node found gone later has its tasks failed
// by the others; and the turn still running on a node taken for gone cannot undo that.
func TestClusterNodesTasks(t *testing.T) {
	storetest.Each(t, clusterNodesTasks)
}

func clusterNodesTasks(t *testing.T, where string) {
	nats := natstest.Start(t)
	inCluster := func(c *cluster.Cluster) func(*Options) { return func(o *Options) { o.Cluster = c } }
	clusterA := joinCluster(t, nats.URL(), "a")
	runA := &fakeRunner{chunks: []string{"thinking"}, block: true, started: make(chan struct{}, 1)}
	a := newTestServer(t, runA, where, inCluster(clusterA))
	onA := startWorking(t, a, runA)
	if n := taskNode(t, a.db, onA); n != "a" {
		t.Errorf("the task of node a is stored as node %q's", n)
	}

	// Node c leaves the cluster with a task working (its handler is not closed: as if it hung).
	clusterC := joinCluster(t, nats.URL(), "c")
	runC := &fakeRunner{chunks: []string{"thinking"}, block: true, started: make(chan struct{}, 1)}
	c := newTestServer(t, runC, where, inCluster(clusterC))
	onC := startWorking(t, c, runC)
	clusterC.Close()

	b := newTestServer(t, &fakeRunner{}, where, inCluster(joinCluster(t, nats.URL(), "b")))
	if got := readTask(t, b, onA); got.Status.State != a2a.TaskStateWorking {
		t.Errorf("node b's start left node a's running task %s %q; want working", got.Status.State, statusText(got.Status))
	}
	if got := readTask(t, b, onC); got.Status.State != a2a.TaskStateFailed || !strings.Contains(statusText(got.Status), "node c ") {
		t.Errorf("node b's start left the task of node c, which is not alive, %s %q; want failed naming node c", got.Status.State, statusText(got.Status))
	}

	// Node a is cut off from the cluster while its turn runs: b fails its task once a is gone.
	clusterA.Close()
	poll.Until(t, "node a's task failed by node b", func() bool {
		return readTask(t, b, onA).Status.State == a2a.TaskStateFailed
	})
	got := readTask(t, b, onA)
	why := statusText(got.Status)
	if !strings.Contains(why, "node a ") {
		t.Errorf("node a's task failed with %q; want the message naming node a", why)
	}
	// a's turn ends as a closes ("shutting down"); the task stays as b ended it.
	a.stop()
	c.stop()
	if got := readTask(t, b, onA); got.Status.State != a2a.TaskStateFailed || statusText(got.Status) != why {
		t.Errorf("after node a closed, its task reads %s %q; want still failed %q", got.Status.State, statusText(got.Status), why)
	}
}

// A task failed by another node is not written over by the node that ran it: its next write is a
// concurrent modification, after which the task reads as the other node left it.
func TestFailedByAnotherNode(t *testing.T) {
	storetest.Each(t, func(t *testing.T, where string) {
		dbA, dbB := storetest.Open(t, where), storetest.Open(t, where)
		now := newFixedClock().Now
		a, err := newSQLTaskStore(t.Context(), dbA, "a", now, 0, 0, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		defer a.close()
		b, err := newSQLTaskStore(t.Context(), dbB, "b", now, 0, 0, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		defer b.close()
		task := &a2a.Task{ID: "t-1", ContextID: "ctx-1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
		v, err := a.Create(t.Context(), task)
		if err != nil {
			t.Fatal(err)
		}
		piece := *task
		piece.Artifacts = []*a2a.Artifact{{ID: "r", Parts: a2a.ContentParts{a2a.NewTextPart("half")}}}
		if v, err = a.Update(t.Context(), &taskstore.UpdateRequest{Task: &piece, PrevVersion: v}); err != nil {
			t.Fatal(err)
		}
		nodes, err := b.unfinishedNodes(t.Context())
		if err != nil || len(nodes) != 1 || nodes[0] != "a" {
			t.Fatalf("unfinished nodes %q, %v; want [a]", nodes, err)
		}
		if n, err := b.failNode(t.Context(), "b", "nothing of b's"); err != nil || n != 0 {
			t.Fatalf("failNode(b): %d, %v; want 0 tasks", n, err)
		}
		if n, err := b.failNode(t.Context(), "a", "node a is gone"); err != nil || n != 1 {
			t.Fatalf("failNode(a): %d, %v; want 1 task", n, err)
		}
		done := piece
		done.Status = a2a.TaskStatus{State: a2a.TaskStateCompleted}
		if _, err := a.Update(t.Context(), &taskstore.UpdateRequest{Task: &done, PrevVersion: v}); !errors.Is(err, taskstore.ErrConcurrentModification) {
			t.Fatalf("node a completing the task b failed: %v; want ErrConcurrentModification", err)
		}
		for name, s := range map[string]*sqlTaskStore{"a": a, "b": b} {
			st, err := s.Get(t.Context(), "t-1")
			if err != nil {
				t.Fatal(err)
			}
			if st.Task.Status.State != a2a.TaskStateFailed || statusText(st.Task.Status) != "node a is gone" {
				t.Errorf("node %s reads the task %s %q; want failed by b", name, st.Task.Status.State, statusText(st.Task.Status))
			}
		}
		if nodes, err := b.unfinishedNodes(t.Context()); err != nil || len(nodes) != 0 {
			t.Errorf("unfinished nodes %q, %v; want none", nodes, err)
		}
	})
}

// A database whose task table predates the node column gets it (step 2 of both dialects), its
// tasks the node "": a node that starts fails those left working.
func TestNodeColumnMigration(t *testing.T) {
	storetest.Each(t, func(t *testing.T, where string) {
		db := storetest.Open(t, where)
		first := store.Schema{SQLite: store.SQL(migrations[0]), Postgres: pgMigrations[:1]}
		if db.Dialect() == store.SQLite {
			if err := sqliteTables(t.Context(), db); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Migrate(t.Context(), "a2a", first); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`INSERT INTO a2a_tasks(id, context_id, state, version, updated_ns, task, status_ns) VALUES(?, ?, ?, 1, 1, ?, 1)`,
			"old", "ctx", string(a2a.TaskStateWorking), `{"id":"old","contextId":"ctx","status":{"state":"TASK_STATE_WORKING"}}`); err != nil {
			t.Fatal(err)
		}
		ts := newTestServer(t, &fakeRunner{}, where, nil)
		if n := taskNode(t, ts.db, "old"); n != "" {
			t.Errorf("an old task's node: %q; want empty", n)
		}
		if got := readTask(t, ts, "old"); got.Status.State != a2a.TaskStateFailed {
			t.Errorf("an old task left working reads %s after a start; want failed", got.Status.State)
		}
	})
}
