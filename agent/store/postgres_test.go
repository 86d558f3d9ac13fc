package store_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/devicectl/devicectl/agent/store"
	"github.com/devicectl/devicectl/agent/store/storetest"
)

// '?' is a placeholder on both dialects, but not inside a string.
func TestPlaceholders(t *testing.T) {
	storetest.Each(t, func(t *testing.T, where string) {
		db := storetest.Open(t, where)
		var lit, arg string
		var n int64
		if err := db.QueryRow(`SELECT '?', ?, ? + 1`, "x", 41).Scan(&lit, &arg, &n); err != nil {
			t.Fatal(err)
		}
		if lit != "?" || arg != "x" || n != 42 {
			t.Errorf("got %q %q %d; want ? x 42", lit, arg, n)
		}
		// The same through a prepared write and a transaction.
		if _, err := db.Write(t.Context(), `CREATE TABLE p (a TEXT, b BIGINT)`); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Write(t.Context(), `INSERT INTO p (a, b) VALUES (?, ?)`, "one?", 1); err != nil {
			t.Fatal(err)
		}
		tx, err := db.BeginWrite(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.TxExec(t.Context(), tx, `INSERT INTO p (a, b) VALUES (?, ?)`, "two", 2); err != nil {
			t.Fatal(err)
		}
		// A statement first met inside the transaction: prepared for it alone, never waiting
		// for the connection the transaction holds.
		var inTx int64
		if err := db.TxQueryRow(t.Context(), tx, `SELECT count(*) FROM p WHERE b <= ?`, 2).Scan(&inTx); err != nil || inTx != 2 {
			t.Errorf("count in the transaction %d, %v; want 2", inTx, err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRow(`SELECT count(*) FROM p WHERE a = ? OR b = ?`, "one?", 2).Scan(&n); err != nil || n != 2 {
			t.Errorf("count %d, %v; want 2", n, err)
		}
	})
}

func TestDialect(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d.String(), func(t *testing.T) {
			where := storetest.Where(t, d)
			if store.IsPostgres(where) != (d == store.Postgres) {
				t.Errorf("IsPostgres(%q) = %v", where, store.IsPostgres(where))
			}
			db := storetest.Open(t, where)
			if db.Dialect() != d {
				t.Errorf("Dialect() = %v; want %v", db.Dialect(), d)
			}
		})
	}
}

// A server that is not there, a login refused, a bad URL: errors at Open, the password masked.
func TestOpenPostgresErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tc := range []struct{ dsn, want string }{
		{"postgres://u:s3cret@" + addr + "/db?sslmode=disable", "store: cannot use the PostgreSQL database postgres://u:xxxxx@" + addr + "/db?sslmode=disable: "},
		{"postgres://u:s3cret@" + addr + "/db?pool_max_conns=0", "store: postgres://u:xxxxx@" + addr + "/db?pool_max_conns=0: pool_max_conns=\"0\" is not a positive number"},
		{"postgres://u:s3cret@" + addr + "/db?sslmode=bogus", "store: postgres://u:xxxxx@" + addr + "/db?sslmode=bogus: "},
		{"postgres://u:s3cret@[::1/db", "store: the PostgreSQL URL does not parse"},
	} {
		db, err := store.Open(ctx, tc.dsn)
		if err == nil {
			db.Close()
			t.Errorf("Open(%s) succeeded", tc.dsn)
			continue
		}
		if !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Open(%s):\n got %v\nwant it to start %s, without the password", tc.dsn, err, tc.want)
		}
	}
	if ctx.Err() != nil {
		t.Error("Open took as long as the test's deadline")
	}
}

// pool_max_conns sets the pool's size; it is not sent to the server as a setting.
func TestOpenPostgresPoolSize(t *testing.T) {
	where := storetest.Where(t, store.Postgres)
	db := storetest.Open(t, where+"&pool_max_conns=3")
	if n := db.Stats().MaxOpenConnections; n != 3 {
		t.Errorf("MaxOpenConnections %d; want 3", n)
	}
	if !strings.Contains(db.String(), "pool_max_conns=3") {
		t.Errorf("String() = %s", db.String())
	}
}

// After Close, writes fail with ErrClosed; a second Close is nothing.
func TestClose(t *testing.T) {
	storetest.Each(t, func(t *testing.T, where string) {
		db, err := store.Open(t.Context(), where)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Write(t.Context(), `SELECT 1`); !errors.Is(err, store.ErrClosed) {
			t.Errorf("Write after Close: %v; want ErrClosed", err)
		}
		if err := db.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
}
