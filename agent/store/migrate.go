package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Step is one migration: the SQL, or Go (rebuilding derived data from existing rows, say), that
// takes a component's tables from one version to the next. It runs inside the step's
// transaction, with the version bump.
type Step func(ctx context.Context, tx *sql.Tx) error

// SQL is the steps that run each query (which may hold several statements), in order.
func SQL(queries ...string) []Step {
	steps := make([]Step, len(queries))
	for i, q := range queries {
		steps[i] = func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, q)
			return err
		}
	}
	return steps
}

// Schema is a component's migrations on each dialect: SQLite[i] (Postgres[i]) takes its tables
// from version i to i+1 on that dialect. The two lists are versioned apart: a database is one
// or the other, and each list only ever grows (an applied step is never edited).
type Schema struct {
	SQLite   []Step
	Postgres []Step
}

// migrateLock is the PostgreSQL advisory lock the migrations of every component take, so that
// serve processes starting at once on one database migrate one after the other.
const migrateLock = 0x64657669 // "devi"

// Migrate brings component's tables up to date: it applies the steps of db's dialect past the
// version kept in the table schema_migrations (one row per component, so that packages sharing
// the database version their tables independently), each in its own transaction with its
// version bump.
//
// A database whose version for component is newer than its steps was written by a newer
// devicectl; Migrate refuses it rather than guess.
func (db *DB) Migrate(ctx context.Context, component string, s Schema) error {
	if component == "" {
		return errors.New("store: Migrate: empty component")
	}
	steps := s.SQLite
	table := `CREATE TABLE IF NOT EXISTS schema_migrations (
		component TEXT PRIMARY KEY,
		version   INTEGER NOT NULL
	) WITHOUT ROWID`
	if db.dialect == Postgres {
		steps = s.Postgres
		table = `CREATE TABLE IF NOT EXISTS schema_migrations (
			component TEXT PRIMARY KEY,
			version   INTEGER NOT NULL
		)`
	}
	if err := db.inMigration(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, table)
		return err
	}); err != nil {
		return fmt.Errorf("store: migrations table: %w", err)
	}
	for {
		done, err := db.migrateStep(ctx, component, steps)
		if err != nil {
			return err
		}
		if done {
			return nil
		}
	}
}

// inMigration runs f in a transaction on the writer that no other process's migration runs
// beside: SQLite's write lock (the writer's BEGIN IMMEDIATE) or, on PostgreSQL, an advisory lock
// held until the transaction ends (CREATE TABLE IF NOT EXISTS is not safe against itself there).
func (db *DB) inMigration(ctx context.Context, f func(tx *sql.Tx) error) error {
	tx, err := db.BeginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit, a no-op
	if db.dialect == Postgres {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(?)`, migrateLock); err != nil {
			return err
		}
	}
	if err := f(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// errDone ends a migration transaction that had nothing to do.
var errDone = errors.New("done")

// migrateStep applies the next step, if any, and reports whether the schema is now current.
// The version is read inside the step's transaction, under the lock, so that two processes
// migrating at once take turns rather than apply a step twice.
func (db *DB) migrateStep(ctx context.Context, component string, steps []Step) (bool, error) {
	var version int
	err := db.inMigration(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (component, version) VALUES (?, 0)
			ON CONFLICT (component) DO NOTHING`, component); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `SELECT version FROM schema_migrations WHERE component = ?`, component).Scan(&version); err != nil {
			return err
		}
		switch {
		case version > len(steps):
			return fmt.Errorf("the %s tables are at schema version %d, newer than this devicectl knows (%d): use a newer devicectl or another database", component, version, len(steps))
		case version == len(steps):
			return errDone
		}
		if err := steps[version](ctx, tx); err != nil {
			return fmt.Errorf("to version %d: %w", version+1, err)
		}
		_, err := tx.ExecContext(ctx, `UPDATE schema_migrations SET version = ? WHERE component = ?`, version+1, component)
		return err
	})
	switch {
	case errors.Is(err, errDone):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("store: migrating the %s tables of %s: %w", component, db.name, err)
	}
	return false, nil
}
