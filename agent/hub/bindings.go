package hub

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/devicectl/devicectl/agent/store"
)

// Bindings remember the Client-Id each MAC first registered with, so that a MAC whose device is
// offline cannot be taken by another client (see the package documentation). A Bindings is
// safe for concurrent use; the hub serialises its own registrations' reads and writes.
type Bindings interface {
	// Bound returns the Client-Id mac is bound to; "" when it is not bound.
	Bound(ctx context.Context, mac string) (string, error)
	// Bind binds mac to clientID, replacing any binding.
	Bind(ctx context.Context, mac, clientID string) error
	// Forget removes mac's binding and reports whether there was one.
	Forget(ctx context.Context, mac string) (bool, error)
}

// memBindings keeps bindings for the life of the hub: the default when no Bindings is given.
type memBindings struct {
	mu sync.Mutex
	m  map[string]string
}

func newMemBindings() *memBindings { return &memBindings{m: make(map[string]string)} }

func (b *memBindings) Bound(_ context.Context, mac string) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.m[mac], nil
}

func (b *memBindings) Bind(_ context.Context, mac, clientID string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.m[mac] = clientID
	return nil
}

func (b *memBindings) Forget(_ context.Context, mac string) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.m[mac]
	delete(b.m, mac)
	return ok, nil
}

// SQLBindings keeps bindings in the table hub_bindings of the agent's database (agent/store:
// SQLite's agent.db or PostgreSQL, shared with the memory and the task store: hence the prefix),
// so they survive restarts and are the same for every serve process on one database.
type SQLBindings struct {
	db  *store.DB
	now func() time.Time
}

var (
	_ Bindings = (*SQLBindings)(nil)
	_ Bindings = (*memBindings)(nil)
)

// bindingsSchema is the same on both databases. IF NOT EXISTS: the table is older than its
// migrations, and a database made before them has it already.
var bindingsSchema = store.Schema{
	SQLite:   store.SQL(bindingsTable),
	Postgres: store.SQL(bindingsTable),
}

const bindingsTable = `CREATE TABLE IF NOT EXISTS hub_bindings (
	mac       TEXT PRIMARY KEY,
	client_id TEXT NOT NULL,
	bound_at  TEXT NOT NULL
)`

// NewSQLBindings returns bindings kept in db, creating or upgrading their table. The caller
// keeps db and closes it after the hub.
func NewSQLBindings(ctx context.Context, db *store.DB) (*SQLBindings, error) {
	if err := db.Migrate(ctx, "hub", bindingsSchema); err != nil {
		return nil, fmt.Errorf("hub: the table of device bindings: %w", err)
	}
	return &SQLBindings{db: db, now: time.Now}, nil
}

// Bound implements Bindings.
func (s *SQLBindings) Bound(ctx context.Context, mac string) (string, error) {
	var id string
	err := s.db.QueryRowContext(ctx, `SELECT client_id FROM hub_bindings WHERE mac = ?`, mac).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("hub: reading the binding of %s: %w", mac, err)
	}
	return id, nil
}

// Bind implements Bindings.
func (s *SQLBindings) Bind(ctx context.Context, mac, clientID string) error {
	_, err := s.db.Write(ctx,
		`INSERT INTO hub_bindings (mac, client_id, bound_at) VALUES (?, ?, ?)
		 ON CONFLICT (mac) DO UPDATE SET client_id = excluded.client_id, bound_at = excluded.bound_at`,
		mac, clientID, s.now().UTC().Format(time.RFC3339))
	if err != nil {
		return fmt.Errorf("hub: binding %s: %w", mac, err)
	}
	return nil
}

// Forget implements Bindings.
func (s *SQLBindings) Forget(ctx context.Context, mac string) (bool, error) {
	res, err := s.db.Write(ctx, `DELETE FROM hub_bindings WHERE mac = ?`, mac)
	if err != nil {
		return false, fmt.Errorf("hub: forgetting the binding of %s: %w", mac, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("hub: forgetting the binding of %s: %w", mac, err)
	}
	return n > 0, nil
}
