package store_test

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/devicectl/devicectl/agent/store/storetest"
)

// taskRow is about what a seed task's row holds: its JSON with the message and the reply.
var taskRow = `{"id":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"},"history":[` +
	strings.Repeat(`{"messageId":"m","role":"ROLE_USER","parts":[{"text":"把音量调到30"}]},`, 8) + `{}]}`

// BenchmarkWrite is the task store's write path: a row inserted and then updated, as a seed task
// is created and finished, through DB.Write, from one writer and from 16 at once (where writes
// wait for the writer and are committed together). writes/commit is how many writes a commit
// held on average; cpu-ns/op the process's CPU per task (on SQLite, the database's included).
func BenchmarkWrite(b *testing.B) {
	for _, d := range storetest.Dialects {
		b.Run(d.String(), func(b *testing.B) {
			for _, writers := range []int{1, 16} {
				b.Run("writers="+strconv.Itoa(writers), func(b *testing.B) {
					benchWrite(b, storetest.Where(b, d), writers)
				})
			}
		})
	}
}

const (
	benchInsert = `INSERT INTO bench_tasks (id, state, version, updated_ns, task) VALUES (?, ?, 1, ?, ?)`
	benchUpdate = `UPDATE bench_tasks SET state = ?, version = version + 1, updated_ns = ?, task = ? WHERE id = ? AND state = ?`
)

func benchWrite(b *testing.B, where string, writers int) {
	db := storetest.Open(b, where)
	ctx := context.Background()
	if _, err := db.Write(ctx, `CREATE TABLE bench_tasks (id TEXT PRIMARY KEY, state TEXT NOT NULL,
		version BIGINT NOT NULL, updated_ns BIGINT NOT NULL, task TEXT NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Write(ctx, `CREATE INDEX bench_tasks_updated ON bench_tasks (updated_ns, state)`); err != nil {
		b.Fatal(err)
	}
	if err := db.Prepare(ctx, benchInsert, benchUpdate); err != nil {
		b.Fatal(err)
	}
	var next atomic.Int64
	task := func() bool {
		n := next.Add(1)
		id := "t" + strconv.FormatInt(n, 10)
		if _, err := db.Write(ctx, benchInsert, id, "TASK_STATE_WORKING", n, taskRow); err != nil {
			b.Error(err)
			return false
		}
		res, err := db.Write(ctx, benchUpdate, "TASK_STATE_COMPLETED", n+1, taskRow, id, "TASK_STATE_WORKING")
		if err != nil {
			b.Error(err)
			return false
		}
		if n, _ := res.RowsAffected(); n != 1 {
			b.Errorf("update of %s: %d rows", id, n)
			return false
		}
		return true
	}
	commits, grouped := db.GroupCommits()
	cpu0 := storetest.CPU(b)
	b.ResetTimer()
	if writers == 1 {
		for range b.N {
			if !task() {
				return
			}
		}
	} else {
		b.SetParallelism(writers / runtime.GOMAXPROCS(0))
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() && task() {
			}
		})
	}
	b.StopTimer()
	b.ReportMetric(float64(storetest.CPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
	c, g := db.GroupCommits()
	writes := int64(2 * b.N)
	// Commits: each group's one, and one per write that ran alone.
	all := (c - commits) + writes - (g - grouped)
	b.ReportMetric(float64(writes)/float64(all), "writes/commit")
}
