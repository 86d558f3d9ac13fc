package a2a

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"

	"github.com/devicectl/devicectl/agent/store/storetest"
)

// Tasks are written side by side: each task's writes go in order and each is stored as it
// ended, and of the writes racing for one version of a task exactly one is stored.
func TestConcurrentTaskWrites(t *testing.T) {
	storetest.Each(t, func(t *testing.T, where string) {
		db := openDB(t, where)
		defer db.Close()
		s, err := newSQLTaskStore(t.Context(), db, "test", newFixedClock().Now, 0, 0, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		defer s.close()
		task := func(id string, state a2a.TaskState) *a2a.Task {
			return &a2a.Task{ID: a2a.TaskID(id), ContextID: "c", Status: a2a.TaskStatus{State: state}}
		}

		const tasks = 16
		// t.Error may be called from any goroutine; wg.Wait keeps them inside the test.
		var wg sync.WaitGroup
		for i := range tasks {
			wg.Go(func() {
				id := fmt.Sprintf("t%02d", i)
				v, err := s.Create(t.Context(), task(id, a2a.TaskStateWorking))
				for _, st := range []a2a.TaskState{a2a.TaskStateWorking, a2a.TaskStateInputRequired, a2a.TaskStateCompleted} {
					if err != nil {
						break
					}
					v, err = s.Update(t.Context(), &taskstore.UpdateRequest{Task: task(id, st), PrevVersion: v})
				}
				if err != nil {
					t.Error(err)
				} else if v != 4 {
					t.Errorf("%s ended at version %d, want 4", id, v)
				}
			})
		}
		wg.Wait()
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM a2a_tasks WHERE state = ? AND version = 4`, string(a2a.TaskStateCompleted)).Scan(&n); err != nil || n != tasks {
			t.Errorf("%d tasks stored completed at version 4, %v; want %d", n, err, tasks)
		}

		// Writers racing for one version of a running task: one wins, the others are told.
		v, err := s.Create(t.Context(), task("raced", a2a.TaskStateWorking))
		if err != nil {
			t.Fatal(err)
		}
		const racers = 8
		results := make([]error, racers)
		for i := range racers {
			wg.Go(func() {
				_, results[i] = s.Update(t.Context(), &taskstore.UpdateRequest{Task: task("raced", a2a.TaskStateCompleted), PrevVersion: v})
			})
		}
		wg.Wait()
		won := 0
		for _, err := range results {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, taskstore.ErrConcurrentModification):
				t.Errorf("a losing write: %v; want ErrConcurrentModification", err)
			}
		}
		if won != 1 {
			t.Errorf("%d writes of one version stored; want 1", won)
		}
		var state string
		var version int64
		if err := db.QueryRow(`SELECT state, version FROM a2a_tasks WHERE id = 'raced'`).Scan(&state, &version); err != nil ||
			state != string(a2a.TaskStateCompleted) || version != 2 {
			t.Errorf("raced task stored %s at version %d, %v; want completed at 2", state, version, err)
		}
	})
}
