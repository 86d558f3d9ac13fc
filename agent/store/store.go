package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// Dialect is the kind of database behind a DB.
type Dialect int

const (
	SQLite   Dialect = iota // modernc.org/sqlite, a file
	Postgres                // PostgreSQL through pgx
)

func (d Dialect) String() string {
	if d == Postgres {
		return "postgres"
	}
	return "sqlite"
}

// DB is the agent's database. The embedded *sql.DB is the pool for reads (on PostgreSQL it is
// the writers' pool too); writes go through Write, WriteRow, WriteRows and BeginWrite (with
// TxExec and TxQueryRow), which on SQLite use its one writing connection, held by a
// transaction until it ends: a goroutine holding one must write through it, never beside it.
// Close closes both pools. A DB is safe for concurrent use.
type DB struct {
	*sql.DB
	write   *sql.DB // SQLite: one connection; PostgreSQL: the same pool as DB
	dialect Dialect
	name    string // the file, or the URL without its password

	mu    sync.Mutex
	stmts map[string]*sql.Stmt // SQLite: prepared on write, by query; nil once closed

	batch batcher // Write's queue: group commit (batch.go)
}

// Storable reports whether both databases keep s as text unchanged: valid UTF-8 with no NUL
// character, which PostgreSQL's text type refuses. What a user sends is checked with it, so that
// both databases refuse the same input, before any is written.
func Storable(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// IsPostgres reports whether where (agent.store, or a path) names a PostgreSQL database rather
// than a SQLite file.
func IsPostgres(where string) bool {
	return strings.HasPrefix(where, "postgres://") || strings.HasPrefix(where, "postgresql://")
}

// Open opens the database where names: a postgres:// or postgresql:// URL is a PostgreSQL
// database (see OpenPostgres), anything else the path of a SQLite file (see OpenSQLite). Each
// package creates and migrates its own tables in it.
func Open(ctx context.Context, where string) (*DB, error) {
	if IsPostgres(where) {
		return OpenPostgres(ctx, where)
	}
	return OpenSQLite(ctx, where)
}

// Dialect is the kind of database.
func (db *DB) Dialect() Dialect { return db.dialect }

// String names the database for messages: its file, or its URL with the password masked.
func (db *DB) String() string { return db.name }

// BeginWrite begins a transaction on the writer. On SQLite it takes the write lock at once
// (BEGIN IMMEDIATE).
func (db *DB) BeginWrite(ctx context.Context) (*sql.Tx, error) {
	return db.write.BeginTx(ctx, nil)
}

// ErrClosed is what a write returns after Close.
var ErrClosed = errors.New("store: the database is closed")

// Writes are a few statements run many times, prepared once. On SQLite that is a statement
// prepared on the writer's connection and kept for db's life; PostgreSQL's connections (pgx's
// driver) prepare every statement they run once and keep it in a cache of their own.

// Prepare prepares queries on SQLite's writer, for Write, WriteRow, TxExec and TxQueryRow. Call
// it before a transaction needs them (in a store's constructor): a transaction holds the
// writer's one connection, and a statement first met inside one is prepared for that
// transaction only.
func (db *DB) Prepare(ctx context.Context, queries ...string) error {
	for _, q := range queries {
		if _, err := db.prepared(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// prepared returns query prepared on the writer, preparing it the first time; nil on
// PostgreSQL.
func (db *DB) prepared(ctx context.Context, query string) (*sql.Stmt, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.stmts == nil {
		return nil, ErrClosed
	}
	if db.dialect == Postgres {
		return nil, nil
	}
	if st := db.stmts[query]; st != nil {
		return st, nil
	}
	// Not canceled with ctx: the statement outlives the call that prepares it.
	st, err := db.write.PrepareContext(context.WithoutCancel(ctx), query)
	if err != nil {
		return nil, err
	}
	db.stmts[query] = st
	return st, nil
}

// cached returns query's statement if Prepare prepared it.
func (db *DB) cached(query string) *sql.Stmt {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.stmts[query]
}

// Write runs a write outside a transaction, and returns once it is committed. On SQLite, writes
// that wait for the writer together are committed together, in one transaction (batch.go), each
// answered with its own result; a write that fails fails alone. The goroutine must not hold a
// write transaction: on SQLite it would wait for the transaction's connection forever.
func (db *DB) Write(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := db.prepared(ctx, query)
	if err != nil {
		return nil, err
	}
	if st == nil {
		// PostgreSQL: each write on a connection of the pool, as it comes (see batch.go).
		return db.write.ExecContext(ctx, query, args...)
	}
	return db.batched(&queued{ctx: ctx, st: st, args: args})
}

// ReadRow runs a small read made often (at every turn, say) on the writer, with its statement
// prepared once, as Write. On SQLite it costs less there than on the read pool: the writer's
// page cache holds what the writes changed, where a pooled connection reads again the pages
// another connection wrote since its last read. It waits for the writer as a write does, and
// the goroutine must not hold a write transaction.
func (db *DB) ReadRow(ctx context.Context, query string, args ...any) (*sql.Row, error) {
	return db.WriteRow(ctx, query, args...)
}

// WriteRow runs a write that returns a row (RETURNING), as Write.
func (db *DB) WriteRow(ctx context.Context, query string, args ...any) (*sql.Row, error) {
	st, err := db.prepared(ctx, query)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return db.write.QueryRowContext(ctx, query, args...), nil
	}
	return st.QueryRowContext(ctx, args...), nil
}

// WriteRows runs a write that returns rows (RETURNING), as Write. Until the rows are closed
// they hold SQLite's writer.
func (db *DB) WriteRows(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := db.prepared(ctx, query)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return db.write.QueryContext(ctx, query, args...)
	}
	return st.QueryContext(ctx, args...)
}

// TxExec runs query in tx, through its prepared statement when Prepare prepared it.
func (db *DB) TxExec(ctx context.Context, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	if st := db.cached(query); st != nil {
		return tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return tx.ExecContext(ctx, query, args...)
}

// TxQueryRow runs query in tx and returns its row, as TxExec.
func (db *DB) TxQueryRow(ctx context.Context, tx *sql.Tx, query string, args ...any) *sql.Row {
	if st := db.cached(query); st != nil {
		return tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return tx.QueryRowContext(ctx, query, args...)
}

// GroupCommits reports how many transactions committed more than one write of Write together
// (SQLite's group commit), and how many writes they held.
func (db *DB) GroupCommits() (commits, writes int64) {
	db.batch.mu.Lock()
	defer db.batch.mu.Unlock()
	return db.batch.commits, db.batch.writes
}

// Close closes the prepared statements and both pools.
func (db *DB) Close() error {
	db.mu.Lock()
	stmts := db.stmts
	db.stmts = nil
	db.mu.Unlock()
	if stmts == nil {
		return nil
	}
	var errs []error
	for _, st := range stmts {
		errs = append(errs, st.Close())
	}
	if db.write != db.DB {
		errs = append(errs, db.write.Close())
	}
	errs = append(errs, db.DB.Close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("store: closing %s: %w", db.name, err)
	}
	return nil
}
