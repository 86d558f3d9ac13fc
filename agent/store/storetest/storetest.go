// Package storetest runs a test against both of the agent's databases: SQLite (a fresh agent.db
// in a temporary directory, always) and PostgreSQL (a fresh schema from internal/testing/pgtest:
// skipped without a server to test against, a failure then when DEVICECTL_REQUIRE_HW is 1).
// Packages whose tests use it run them through pgtest.Main, which stops its server.
package storetest

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/devicectl/devicectl/agent/store"
	"github.com/devicectl/devicectl/internal/testing/pgtest"
)

// Dialects are both databases, in the order Each runs them.
var Dialects = []store.Dialect{store.SQLite, store.Postgres}

// Each runs f as the subtests "sqlite" and "postgres", each given where (for Open, or
// store.Open) names a database of its own, empty.
func Each(t *testing.T, f func(t *testing.T, where string)) {
	t.Helper()
	for _, d := range Dialects {
		t.Run(d.String(), func(t *testing.T) {
			f(t, Where(t, d))
		})
	}
}

// Where returns what names a new, empty database of dialect d for store.Open: a file in a
// temporary directory, or the URL of a PostgreSQL schema of its own.
func Where(tb testing.TB, d store.Dialect) string {
	tb.Helper()
	if d == store.Postgres {
		return pgtest.DSN(tb)
	}
	return filepath.Join(tb.TempDir(), "agent.db")
}

// Open opens where (again: a second Open of one where is a second process on one database, or
// the same one after a restart) and closes it when tb ends.
func Open(tb testing.TB, where string) *store.DB {
	tb.Helper()
	db, err := store.Open(context.Background(), where)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// CPU is the CPU time the process has used so far (user and system): for the benchmarks of the
// database's users, on SQLite the database's own work included (PostgreSQL's is its server's).
func CPU(tb testing.TB) time.Duration {
	tb.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
