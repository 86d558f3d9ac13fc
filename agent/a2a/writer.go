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
// one writing connection, PostgreSQL's pool), with statements prepared once. The writes of
// concurrent tasks go in together: agent/store commits the writes that wait for the writer in one
// transaction (group commit), each answered once it is committed. A task's own writes are put in
// order by the store (liveTask.turn), not here.
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
	db     *store.DB
	mu     sync.RWMutex // held shared by each write, so that close waits for those under way
	closed bool         // guarded by mu

	writes atomic.Int64 // statements run, for the benchmarks' writes per task
}

var errWriterClosed = errors.New("a2a: the task store is closed")

func newWriter(_ context.Context, db *store.DB) (*writer, error) {
	return &writer{db: db}, nil
}

// exec runs a write. It is not canceled with ctx: a task's state is stored whether or not its
// client is still there, and a write takes no time worth saving.
func (w *writer) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		return nil, errWriterClosed
	}
	w.writes.Add(1)
	return w.db.Write(context.WithoutCancel(ctx), query, args...)
}

// queryRow runs a write that returns a row (RETURNING).
func (w *writer) queryRow(ctx context.Context, query string, args ...any) (*sql.Row, error) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		return nil, errWriterClosed
	}
	w.writes.Add(1)
	return w.db.WriteRow(context.WithoutCancel(ctx), query, args...)
}

// close waits for the writes under way and makes later ones fail with errWriterClosed; the
// database stays open.
func (w *writer) close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	return nil
}
