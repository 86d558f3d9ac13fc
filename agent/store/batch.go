package store

import (
	"context"
	"database/sql"
	"sync"
)

// Group commit, on SQLite. A commit costs more than the statement it commits: SQLite writes the
// pages it changed to the WAL (a page written by several writes of a batch is written once),
// updates the WAL's index, takes and drops its locks. SQLite's writes go through one connection
// anyway: those that arrive while another batch is being committed wait in a queue; the writer
// then takes everything queued and runs it in one transaction, one commit for all of them, and
// answers each with its own result. A write alone in the queue runs on its own, as a statement
// of its own (autocommit), as before.
//
// PostgreSQL's writes do not queue: each goes on a connection of the pool as it comes, and the
// server flushes the WAL once for the commits that wait for a flush together. Batching them on
// one connection made a seed task slower there, not faster (one round trip after another
// instead of side by side; docs/storage.md).
//
// There is no goroutine of its own: the first writer to find nobody writing leads, runs the
// queue's batch, and hands the lead to the first write queued meanwhile, so that a writer waits
// for at most the batch before its own, never for a stream of others.
//
// A write is answered after the commit that holds it, as if it had run alone: the durability of
// each is SQLite's, as before. When a statement of a batch fails, the batch is rolled back and
// each of its writes runs again on its own, so that one write's failure (a constraint, say) is
// its own and no other's. A write whose context is done before its batch begins is answered
// with the context's error and not run; once its batch has begun, it runs to its end as the
// others do.

// queued is a write waiting in the batcher's queue.
type queued struct {
	ctx  context.Context
	st   *sql.Stmt // prepared on the writer
	args []any

	res  sql.Result
	err  error
	lead bool          // set before done is closed: this write leads the next batch
	done chan struct{} // a write that waits: closed when res and err are set, or lead; nil for the leader
}

// batcher is the queue of the writes that wait for the writer, see above.
type batcher struct {
	mu      sync.Mutex
	queue   []*queued
	leading bool      // a writer is running a batch
	spare   []*queued // the slice of the last batch, for the next queue

	commits, writes int64 // commits of batches of more than one write, and their writes
}

// batched runs q in a batch, leading it or waiting for its answer, and returns its result.
func (db *DB) batched(q *queued) (sql.Result, error) {
	b := &db.batch
	b.mu.Lock()
	if b.leading {
		q.done = make(chan struct{})
		b.queue = append(b.queue, q)
		b.mu.Unlock()
		<-q.done
		if !q.lead {
			return q.res, q.err
		}
		// The previous batch's leader handed the lead over: q is first in the queue.
		q.done, q.lead = nil, false
		b.mu.Lock()
	} else {
		b.leading = true
		b.queue = append(b.queue, q)
	}
	batch := b.queue
	b.queue, b.spare = b.spare, nil
	b.mu.Unlock()

	together := db.runBatch(batch)

	b.mu.Lock()
	if together > 0 {
		b.commits++
		b.writes += int64(together)
	}
	if len(b.queue) > 0 {
		next := b.queue[0]
		next.lead = true
		close(next.done)
	} else {
		b.leading = false
	}
	clear(batch)
	b.spare = batch[:0]
	b.mu.Unlock()
	return q.res, q.err
}

// runBatch runs the batch's writes and answers each, and returns how many one transaction
// committed together (0 when they ran one by one).
func (db *DB) runBatch(batch []*queued) int {
	live := batch[:0] // batch is the leader's alone, and each write is answered once
	for _, q := range batch {
		if err := q.ctx.Err(); err != nil {
			q.err = err
			q.answer()
			continue
		}
		live = append(live, q)
	}
	together := 0
	switch {
	case len(live) == 1:
		live[0].runAlone()
	case len(live) > 1 && db.runTogether(live):
		together = len(live)
	default:
		for _, q := range live {
			q.runAlone()
		}
	}
	for _, q := range live {
		q.answer()
	}
	return together
}

// answer wakes the write's caller, unless the caller is the one that runs the batch.
func (q *queued) answer() {
	if q.done != nil {
		close(q.done)
	}
}

// runAlone runs the write as a statement of its own.
func (q *queued) runAlone() {
	q.res, q.err = q.st.ExecContext(context.WithoutCancel(q.ctx), q.args...)
}

// runTogether runs the writes in one transaction and reports whether each has its answer: false
// when one failed, with the transaction rolled back and nothing of it written. A failed commit
// is each write's answer.
func (db *DB) runTogether(batch []*queued) bool {
	ctx := context.Background()
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return false
	}
	for _, q := range batch {
		q.res, q.err = tx.StmtContext(ctx, q.st).ExecContext(ctx, q.args...)
		if q.err != nil {
			tx.Rollback() //nolint:errcheck // the writes run again one by one
			return false
		}
	}
	if err := tx.Commit(); err != nil {
		// Nothing of the batch is known to be written: each write reports the failed commit.
		for _, q := range batch {
			q.res, q.err = nil, err
		}
	}
	return true
}
