package memory

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Migrate brings component's tables in db up to date. steps[i] is the SQL
// that takes the schema from version i to i+1; the version reached is kept in
// the table schema_migrations, one row per component, so that packages
// sharing the database (memory, the A2A task store) version their tables
// independently. Each step runs in its own transaction with its version bump.
// Steps are only ever appended: an applied step is never edited.
//
// A database whose version for component is newer than len(steps) was
// written by a newer devicectl; Migrate refuses it rather than guess.
func Migrate(ctx context.Context, db *sql.DB, component string, steps []string) error {
	funcs := make([]Step, len(steps))
	for i, q := range steps {
		funcs[i] = sqlStep(q)
	}
	return MigrateSteps(ctx, db, component, funcs)
}

func sqlStep(q string) Step {
	return func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, q)
		return err
	}
}

// Step is one migration that needs Go, not only SQL: rebuilding derived
// data from existing rows, say. It runs inside the step's transaction.
type Step func(ctx context.Context, tx *sql.Tx) error

// MigrateSteps is Migrate with steps written in Go.
func MigrateSteps(ctx context.Context, db *sql.DB, component string, steps []Step) error {
	if component == "" {
		return errors.New("memory: Migrate: empty component")
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		component TEXT PRIMARY KEY,
		version   INTEGER NOT NULL
	) WITHOUT ROWID`); err != nil {
		return fmt.Errorf("memory: migrations table: %w", err)
	}
	for {
		done, err := migrateStep(ctx, db, component, steps)
		if err != nil {
			return err
		}
		if done {
			return nil
		}
	}
}

// migrateStep applies the next step, if any, and reports whether the schema
// is now current. Reading the version inside the write transaction makes two
// processes migrating at once take turns rather than apply a step twice.
func migrateStep(ctx context.Context, db *sql.DB, component string, steps []Step) (done bool, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("memory: migrating %s: %w", component, err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	// Take the write lock first (an upsert that changes nothing), so that
	// the read below cannot be overtaken by another writer.
	if _, err = tx.ExecContext(ctx, `INSERT INTO schema_migrations (component, version) VALUES (?, 0)
		ON CONFLICT (component) DO NOTHING`, component); err != nil {
		return false, fmt.Errorf("memory: migrating %s: %w", component, err)
	}
	var version int
	if err = tx.QueryRowContext(ctx, `SELECT version FROM schema_migrations WHERE component = ?`, component).Scan(&version); err != nil {
		return false, fmt.Errorf("memory: migrating %s: %w", component, err)
	}
	switch {
	case version > len(steps):
		err = fmt.Errorf("memory: the %s tables are at schema version %d, newer than this devicectl knows (%d): use a newer devicectl or another state directory", component, version, len(steps))
		return false, err
	case version == len(steps):
		return true, tx.Commit()
	}
	if err = steps[version](ctx, tx); err != nil {
		return false, fmt.Errorf("memory: migrating %s to version %d: %w", component, version+1, err)
	}
	if _, err = tx.ExecContext(ctx, `UPDATE schema_migrations SET version = ? WHERE component = ?`, version+1, component); err != nil {
		return false, fmt.Errorf("memory: migrating %s to version %d: %w", component, version+1, err)
	}
	if err = tx.Commit(); err != nil {
		return false, fmt.Errorf("memory: migrating %s to version %d: %w", component, version+1, err)
	}
	return false, nil
}
