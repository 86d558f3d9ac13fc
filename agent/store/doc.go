// Package store is the agent's database: one handle that the memory, the reminders, the device
// bindings and the A2A task store keep their tables in, on one of two backends.
//
//   - SQLite (the default: nothing to install): agent.db in the state directory, through the
//     pure-Go modernc.org/sqlite, in WAL mode with synchronous=NORMAL. Reads go through a pool
//     of connections, which WAL lets read while another writes; writes go through one connection
//     of their own, so that the writers of one process wait their turn in Go rather than collide
//     in SQLite's busy handler (the writes of DB.Write that wait together are then committed
//     together, in one transaction: group commit, batch.go), and its transactions begin IMMEDIATE (the write lock taken at
//     BEGIN), so that another process's writer makes them wait, never fail half-way.
//     synchronous=NORMAL fsyncs the WAL at checkpoints, not at every commit: a crash of the
//     process loses nothing committed, a power cut or a kernel panic can lose the last commits
//     since the last checkpoint (at most wal_autocheckpoint's 1000 pages, about 4 MB of writes),
//     never the file's consistency. docs/storage.md says what that means for tasks, memories and
//     reminders.
//   - PostgreSQL (agent.store: postgres://...), for deployments past one machine: several serve
//     processes may share one database. It goes through pgx's database/sql driver
//     (github.com/jackc/pgx/v5/stdlib), so that both backends are one database/sql API to the
//     packages above, with pgx's per-connection cache of prepared statements. Reads and writes
//     share one pool. Durability is the server's (synchronous_commit).
//
// Open takes a file path or a postgres:// (postgresql://) URL and returns a *DB; the packages
// write through DB.Write (a statement prepared once on the writer) and DB.BeginWrite, and read
// through the embedded *sql.DB.
//
// SQL is written once for both where it can be: placeholders are SQLite's '?', which the
// PostgreSQL connections rewrite to $1, $2, ... (outside quotes and comments; PostgreSQL's jsonb
// operators ?, ?| and ?& cannot be written in it: use jsonb_exists and its kin). Where the
// dialects differ (column types, full-text search) a package branches on DB.Dialect.
//
// Each package versions its own tables with DB.Migrate: a list of steps per dialect, applied at
// start in order, each in a transaction with its version number (table schema_migrations, one
// row per component). Several processes starting at once take turns: SQLite's write lock, a
// PostgreSQL advisory lock.
package store
