package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/devicectl/devicectl/agent/store"
	"github.com/devicectl/devicectl/agent/store/storetest"
)

// both is a schema whose steps are the same SQL on both dialects.
func both(queries ...string) store.Schema {
	return store.Schema{SQLite: store.SQL(queries...), Postgres: store.SQL(queries...)}
}

func TestMigrate(t *testing.T) {
	storetest.Each(t, func(t *testing.T, where string) {
		db := storetest.Open(t, where)
		ctx := context.Background()
		steps := []string{
			`CREATE TABLE a_one (x INTEGER)`,
			`ALTER TABLE a_one ADD COLUMN y TEXT; CREATE TABLE a_two (z INTEGER)`,
		}
		if err := db.Migrate(ctx, "a", both(steps[:1]...)); err != nil {
			t.Fatal(err)
		}
		// Another component shares the table of versions, not the version.
		if err := db.Migrate(ctx, "b", both(`CREATE TABLE b_one (x INTEGER)`)); err != nil {
			t.Fatal(err)
		}
		// Growing: only the new step runs (a second CREATE TABLE a_one would fail).
		if err := db.Migrate(ctx, "a", both(steps...)); err != nil {
			t.Fatal(err)
		}
		if err := db.Migrate(ctx, "a", both(steps...)); err != nil {
			t.Fatalf("again: %v", err)
		}
		if _, err := db.Write(ctx, `INSERT INTO a_one (x, y) VALUES (1, 'y')`); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Write(ctx, `INSERT INTO a_two (z) VALUES (?)`, 2); err != nil {
			t.Fatal(err)
		}
		if got := versions(t, db); got["a"] != 2 || got["b"] != 1 {
			t.Errorf("versions %v; want a:2 b:1", got)
		}
		// An older devicectl meets the newer schema.
		err := db.Migrate(ctx, "a", both(steps[:1]...))
		if err == nil || !strings.Contains(err.Error(), "schema version 2, newer than this devicectl knows (1)") {
			t.Errorf("older steps: %v", err)
		}
		// A failing step leaves the version where it was, and nothing of what it did.
		err = db.Migrate(ctx, "b", both(`CREATE TABLE b_one (x INTEGER)`, `CREATE TABLE b_two (x INTEGER); CREATE TABLE nonsense (`))
		if err == nil {
			t.Error("a bad step succeeded")
		}
		if got := versions(t, db); got["b"] != 1 {
			t.Errorf("b after a failed step: version %d; want 1", got["b"])
		}
		if _, err := db.Write(ctx, `INSERT INTO b_two (x) VALUES (1)`); err == nil {
			t.Error("the failed step's first statement stayed")
		}
	})
}

// The steps of the database's own dialect run, and only those.
func TestMigrateDialect(t *testing.T) {
	storetest.Each(t, func(t *testing.T, where string) {
		db := storetest.Open(t, where)
		s := store.Schema{SQLite: store.SQL(`CREATE TABLE for_sqlite (x INTEGER)`), Postgres: store.SQL(`CREATE TABLE for_postgres (x BIGINT)`)}
		if err := db.Migrate(context.Background(), "c", s); err != nil {
			t.Fatal(err)
		}
		want, other := "for_sqlite", "for_postgres"
		if db.Dialect() == store.Postgres {
			want, other = other, want
		}
		if _, err := db.Write(t.Context(), `INSERT INTO `+want+` (x) VALUES (1)`); err != nil {
			t.Error(err)
		}
		if _, err := db.Write(t.Context(), `INSERT INTO `+other+` (x) VALUES (1)`); err == nil {
			t.Errorf("%s exists on %s", other, db.Dialect())
		}
	})
}

// Serve processes starting at once on one database migrate one after the other: every step runs
// once, none fails on another's tables.
func TestMigrateConcurrent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, where string) {
		const processes = 4
		var steps []string
		for i := range 5 {
			steps = append(steps, fmt.Sprintf(`CREATE TABLE m%d (x INTEGER); INSERT INTO m0 (x) VALUES (%d)`, i, i))
		}
		steps[0] = `CREATE TABLE m0 (x INTEGER)`
		var wg sync.WaitGroup
		errs := make([]error, processes)
		dbs := make([]*store.DB, processes)
		for i := range dbs {
			dbs[i] = storetest.Open(t, where)
		}
		for i, db := range dbs {
			wg.Go(func() { errs[i] = db.Migrate(context.Background(), "m", both(steps...)) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := dbs[0].QueryRow(`SELECT count(*) FROM m0`).Scan(&n); err != nil || n != len(steps)-1 {
			t.Errorf("m0 holds %d rows, %v; want %d (each step once)", n, err, len(steps)-1)
		}
	})
}

func versions(t *testing.T, db *store.DB) map[string]int {
	t.Helper()
	rows, err := db.Query(`SELECT component, version FROM schema_migrations`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var c string
		var v int
		if err := rows.Scan(&c, &v); err != nil {
			t.Fatal(err)
		}
		out[c] = v
	}
	return out
}
