package a2a

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/devicectl/devicectl/agent/store"
)

// writer is how the task store writes: through the database's writer (agent/store: SQLite's
// one writing connection, PostgreSQL's pool), with statements prepared once, under a mutex that
// a store holds across a check and the write that follows it.
//
// SQLite lets one connection write at a time; writers on several connections of a pool would
// collide, and each loser sleep and retry in the busy handler (SQLITE_BUSY). Writing through one
// connection makes the writers wait their turn in Go instead. Reads go through the pool: in WAL
// mode they do not wait for the writer.
//
// Durability is the database's: SQLite's agent.db is in WAL mode with synchronous=NORMAL, so a
// commit is in the WAL file before it returns but fsynced only at a checkpoint. A process crash
// loses nothing committed; a power cut or kernel panic can lose the last commits before the
// checkpoint (tasks then read as they were a few writes earlier, or not at all), never corrupt
// the file. PostgreSQL's is the server's (synchronous_commit).
type writer struct {
	mu     sync.Mutex // held across a store's check-and-write; guards closed
	db     *store.DB
	closed bool

	writes atomic.Int64 // statements run, for the benchmarks' writes per task
}

var errWriterClosed = errors.New("a2a: the task store is closed")

func newWriter(_ context.Context, db *store.DB) (*writer, error) {
	return &writer{db: db}, nil
}

// execLocked runs a write with w.mu held. It is not canceled with ctx: a task's state is
// stored whether or not its client is still there, and a write takes no time worth saving.
func (w *writer) execLocked(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if w.closed {
		return nil, errWriterClosed
	}
	w.writes.Add(1)
	return w.db.Write(context.WithoutCancel(ctx), query, args...)
}

// queryRowLocked runs a write that returns a row (RETURNING) with w.mu held.
func (w *writer) queryRowLocked(ctx context.Context, query string, args ...any) (*sql.Row, error) {
	if w.closed {
		return nil, errWriterClosed
	}
	w.writes.Add(1)
	return w.db.WriteRow(context.WithoutCancel(ctx), query, args...)
}

// close makes later writes fail with errWriterClosed; the database stays open.
func (w *writer) close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	return nil
}
