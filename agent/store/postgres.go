package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// PostgreSQL pool defaults: enough for a serve process's concurrent turns (a write is short),
// few enough that several serve processes stay under the server's max_connections (100).
const (
	defaultMaxConns = 10
	// pingTimeout bounds Open's first connection: a server that is down is an error at start.
	pingTimeout = 15 * time.Second
)

// poolMaxConnsParam is the URL parameter that sets the pool's size: pgxpool's name for it, so
// that a URL written for other pgx programs means the same here.
const poolMaxConnsParam = "pool_max_conns"

// OpenPostgres opens the PostgreSQL database at dsn, a postgres:// or postgresql:// URL as libpq
// and pgx take it (postgres://USER@HOST:PORT/DB?sslmode=verify-full, host=/run/postgresql for a
// unix socket). The password is best kept out of it: pgx reads PGPASSWORD and ~/.pgpass
// (PGPASSFILE) as libpq does. pool_max_conns=N sets how many connections this process opens at
// most (default 10). It connects once before returning, so that a server that is down or a
// refused login is an error at start, with the URL (its password masked) in it.
func OpenPostgres(ctx context.Context, dsn string) (*DB, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		// url's error quotes the whole URL, password and all.
		return nil, errors.New("store: the PostgreSQL URL does not parse: want postgres://USER@HOST:PORT/DATABASE")
	}
	name := u.Redacted()
	maxConns := defaultMaxConns
	q := u.Query()
	if v := q.Get(poolMaxConnsParam); v != "" {
		if maxConns, err = strconv.Atoi(v); err != nil || maxConns < 1 {
			return nil, fmt.Errorf("store: %s: %s=%q is not a positive number", name, poolMaxConnsParam, v)
		}
		q.Del(poolMaxConnsParam)
		u.RawQuery = q.Encode()
	}
	cfg, err := pgx.ParseConfig(u.String())
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", name, err)
	}
	pool := sql.OpenDB(rebindConnector{stdlib.GetConnector(*cfg)})
	pool.SetMaxOpenConns(maxConns)
	pool.SetMaxIdleConns(maxConns)
	pool.SetConnMaxIdleTime(5 * time.Minute)
	pctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	if err := pool.PingContext(pctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: cannot use the PostgreSQL database %s: %w", name, err)
	}
	return &DB{DB: pool, write: pool, dialect: Postgres, name: name, stmts: make(map[string]*sql.Stmt)}, nil
}

// rebindConnector makes pgx's connections take '?' placeholders (see rebind).
type rebindConnector struct{ driver.Connector }

func (c rebindConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	sc, ok := conn.(*stdlib.Conn)
	if !ok {
		conn.Close()
		return nil, fmt.Errorf("store: pgx's connector gave a %T, not a *stdlib.Conn", conn)
	}
	return rebindConn{sc}, nil
}

// rebindConn is a pgx connection that rewrites the queries it is given. Every other method
// (transactions, pings, session resets, the value checker) is pgx's.
type rebindConn struct{ *stdlib.Conn }

func (c rebindConn) Prepare(query string) (driver.Stmt, error) {
	return c.Conn.Prepare(rebind(query))
}

func (c rebindConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.Conn.PrepareContext(ctx, rebind(query))
}

func (c rebindConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.ExecContext(ctx, rebind(query), args)
}

func (c rebindConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.QueryContext(ctx, rebind(query), args)
}

// The interfaces database/sql looks for, all pgx's but the four above.
var (
	_ driver.ConnPrepareContext = rebindConn{}
	_ driver.ExecerContext      = rebindConn{}
	_ driver.QueryerContext     = rebindConn{}
	_ driver.ConnBeginTx        = rebindConn{}
	_ driver.Pinger             = rebindConn{}
	_ driver.SessionResetter    = rebindConn{}
	_ driver.NamedValueChecker  = rebindConn{}
)
