package a2a

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// writer is the task stores' one connection for writing, with its statements prepared once.
//
// SQLite lets one connection write at a time; writers on several connections of a pool
// collide, and each loser sleeps and retries in the busy handler (SQLITE_BUSY). Writing through
// one connection under a mutex makes the writers wait their turn in Go instead, and a statement
// prepared on that connection is prepared once for the store's life. Reads go through the pool:
// in WAL mode they do not wait for the writer.
//
// Durability is the database's: agent/memory.OpenDB sets journal_mode=WAL with
// synchronous=NORMAL, so a commit is in the WAL file before it returns but fsynced only at a
// checkpoint. A process crash loses nothing committed; a power cut or kernel panic can lose the
// last commits before the checkpoint (tasks then read as they were a few writes earlier, or
// not at all), never corrupt the file.
type writer struct {
	mu     sync.Mutex // held across a store's check-and-write; guards the rest
	conn   *sql.Conn
	stmts  map[string]*sql.Stmt
	closed bool

	writes atomic.Int64 // statements run, for the benchmarks' writes per task
}

var errWriterClosed = errors.New("a2a: the task store is closed")

func newWriter(ctx context.Context, db *sql.DB) (*writer, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("a2a: opening the task store's connection: %w", err)
	}
	return &writer{conn: conn, stmts: make(map[string]*sql.Stmt)}, nil
}

// stmtLocked is query prepared on the writer's connection, once.
func (w *writer) stmtLocked(query string) (*sql.Stmt, error) {
	if w.closed {
		return nil, errWriterClosed
	}
	if st := w.stmts[query]; st != nil {
		return st, nil
	}
	st, err := w.conn.PrepareContext(context.Background(), query)
	if err != nil {
		return nil, err
	}
	w.stmts[query] = st
	return st, nil
}

// execLocked runs a write with w.mu held. It is not canceled with ctx: a task's state is
// stored whether or not its client is still there, and a write takes no time worth saving.
func (w *writer) execLocked(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := w.stmtLocked(query)
	if err != nil {
		return nil, err
	}
	w.writes.Add(1)
	return st.ExecContext(context.WithoutCancel(ctx), args...)
}

// queryRowLocked runs a write that returns a row (RETURNING) with w.mu held.
func (w *writer) queryRowLocked(ctx context.Context, query string, args ...any) (*sql.Row, error) {
	st, err := w.stmtLocked(query)
	if err != nil {
		return nil, err
	}
	w.writes.Add(1)
	return st.QueryRowContext(context.WithoutCancel(ctx), args...), nil
}

// close releases the statements and the connection; later writes fail with errWriterClosed.
func (w *writer) close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	for _, st := range w.stmts {
		st.Close()
	}
	return w.conn.Close()
}
