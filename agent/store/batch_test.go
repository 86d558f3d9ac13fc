package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/devicectl/devicectl/internal/testing/pgtest"
	"github.com/devicectl/devicectl/internal/testing/poll"
)

// eachDB runs f on a new database of each dialect given (storetest.Each, which this package's
// own tests cannot import).
func eachDB(t *testing.T, dialects []Dialect, f func(t *testing.T, db *DB)) {
	for _, d := range dialects {
		t.Run(d.String(), func(t *testing.T) {
			where := filepath.Join(t.TempDir(), "agent.db")
			if d == Postgres {
				where = pgtest.DSN(t)
			}
			db, err := Open(t.Context(), where)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			f(t, db)
		})
	}
}

// write is one Write and its answer.
type write struct {
	ctx    context.Context
	cancel context.CancelFunc
	id     int
	n      int64 // rows affected
	err    error
	done   chan struct{}
}

const (
	leadWrite   = `UPDATE t SET v = v + 10 WHERE id = 0`
	insertWrite = `INSERT INTO t (id, v) VALUES (?, 0)`
)

// queueWrites holds SQLite's writer, starts a write that waits for it and leads, queues inserts of ids behind it, and returns them with
// release, which lets the writer go.
func queueWrites(t *testing.T, db *DB, ids []int) (writes []*write, release func()) {
	t.Helper()
	// Prepared first: on SQLite a statement is prepared on the writer, which tx holds.
	if err := db.Prepare(t.Context(), leadWrite, insertWrite); err != nil {
		t.Fatal(err)
	}
	tx, err := db.BeginWrite(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`UPDATE t SET v = v + 1 WHERE id = 0`); err != nil {
		t.Fatal(err)
	}
	start := func(w *write, query string, args ...any) {
		go func() {
			defer close(w.done)
			var res sql.Result
			if res, w.err = db.Write(w.ctx, query, args...); w.err == nil {
				w.n, w.err = res.RowsAffected()
			}
		}()
	}
	queued := func() (n int, leading bool) {
		db.batch.mu.Lock()
		defer db.batch.mu.Unlock()
		return len(db.batch.queue), db.batch.leading
	}
	lead := &write{ctx: t.Context(), id: 0, done: make(chan struct{})}
	start(lead, leadWrite)
	poll.Until(t, "a write leading", func() bool { n, leading := queued(); return leading && n == 0 })
	writes = append(writes, lead)
	for _, id := range ids {
		ctx, cancel := context.WithCancel(t.Context())
		w := &write{ctx: ctx, cancel: cancel, id: id, done: make(chan struct{})}
		start(w, insertWrite, id)
		writes = append(writes, w)
	}
	poll.Until(t, fmt.Sprintf("%d writes queued", len(ids)), func() bool { n, _ := queued(); return n == len(ids) })
	return writes, func() {
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		for _, w := range writes {
			<-w.done
			if w.cancel != nil {
				w.cancel()
			}
		}
	}
}

// newTable makes the table t with its row 0, which the write that leads holds.
func newTable(t *testing.T, db *DB) {
	t.Helper()
	if _, err := db.Write(t.Context(), `CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Write(t.Context(), `INSERT INTO t (id, v) VALUES (0, 0)`); err != nil {
		t.Fatal(err)
	}
}

func rowCount(t *testing.T, db *DB) (n, v int) {
	t.Helper()
	if err := db.QueryRow(`SELECT count(*), sum(v) FROM t`).Scan(&n, &v); err != nil {
		t.Fatal(err)
	}
	return n, v
}

// The writes that wait for the writer go in one transaction, each answered with its own result.
func TestGroupCommit(t *testing.T) {
	eachDB(t, []Dialect{SQLite}, func(t *testing.T, db *DB) {
		newTable(t, db)
		var ids []int
		for i := 1; i <= 20; i++ {
			ids = append(ids, i)
		}
		writes, release := queueWrites(t, db, ids)
		release()
		for _, w := range writes {
			if w.err != nil || w.n != 1 {
				t.Errorf("write %d: %d rows, %v; want 1, nil", w.id, w.n, w.err)
			}
		}
		if n, v := rowCount(t, db); n != 21 || v != 11 {
			t.Errorf("%d rows, sum %d; want 21, 11", n, v)
		}
		// The leader's write ran alone; the 20 queued behind it, together.
		if commits, writes := db.GroupCommits(); commits != 1 || writes != 20 {
			t.Errorf("%d group commits of %d writes; want 1 of 20", commits, writes)
		}
	})
}

// A write that fails in a batch fails alone: the others are written and answered as if each had
// run on its own. A write whose context ends while it waits is not run.
func TestGroupCommitFailureIsOwn(t *testing.T) {
	eachDB(t, []Dialect{SQLite}, func(t *testing.T, db *DB) {
		newTable(t, db)
		// 5 is inserted twice: one of the two fails on the primary key. 9's caller gives up.
		ids := []int{1, 2, 3, 4, 5, 6, 5, 7, 8, 9, 10}
		writes, release := queueWrites(t, db, ids)
		var gaveUp *write
		for _, w := range writes {
			if w.id == 9 {
				gaveUp = w
				w.cancel()
			}
		}
		release()
		failed := 0
		for _, w := range writes {
			switch {
			case w == gaveUp:
				if !errors.Is(w.err, context.Canceled) {
					t.Errorf("write %d, canceled while it waited: %d rows, %v; want context.Canceled", w.id, w.n, w.err)
				}
			case w.id == 5 && w.err != nil:
				failed++
			case w.err != nil || w.n != 1:
				t.Errorf("write %d: %d rows, %v; want 1, nil", w.id, w.n, w.err)
			}
		}
		if failed != 1 {
			t.Errorf("%d of the two inserts of 5 failed; want 1", failed)
		}
		var nine int
		if err := db.QueryRow(`SELECT count(*) FROM t WHERE id = 9`).Scan(&nine); err != nil || nine != 0 {
			t.Errorf("the canceled write: %d rows, %v; want 0", nine, err)
		}
		if n, v := rowCount(t, db); n != 10 || v != 11 {
			t.Errorf("%d rows, sum %d; want 10, 11", n, v)
		}
	})
}

// Concurrent writers, whatever the batches they fall into, each have their write, once.
func TestGroupCommitConcurrent(t *testing.T) {
	eachDB(t, []Dialect{SQLite, Postgres}, func(t *testing.T, db *DB) {
		if _, err := db.Write(t.Context(), `CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER NOT NULL)`); err != nil {
			t.Fatal(err)
		}
		const writers, each = 8, 50
		// t.Error may be called from any goroutine; wg.Wait keeps them inside the test.
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					res, err := db.Write(t.Context(), `INSERT INTO t (id, v) VALUES (?, 1)`, w*each+i)
					if err != nil {
						t.Error(err)
						continue
					}
					if n, err := res.RowsAffected(); err != nil || n != 1 {
						t.Errorf("insert %d: %d rows, %v", w*each+i, n, err)
					}
				}
			})
		}
		wg.Wait()
		if n, v := rowCount(t, db); n != writers*each || v != writers*each {
			t.Errorf("%d rows, sum %d; want %d", n, v, writers*each)
		}
	})
}
