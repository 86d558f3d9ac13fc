package a2a

import "github.com/devicectl/devicectl/agent/store"

// pgMigrations are the task tables' versioned steps on PostgreSQL (component "a2a", see
// store.DB.Migrate): 1. the table as SQLite's was after its first step, its nanosecond times in
// BIGINT; 2. node, as on SQLite; 3. the context's index without updated_ns, as on SQLite. The task store's statements are the same on both databases
// (agent/store takes SQLite's placeholders to PostgreSQL's); SQLite's first step
// (store_migrations.go) moves a table PostgreSQL never had.
//
// Several serve processes may share one PostgreSQL database. Each keeps the tasks it runs, and
// their newest pieces, in memory until their state changes (each row names the node that runs
// it: see sqlTaskStore), and counts the rows for agent.tasks.keep.count as it sees them (its
// creations and deletions): with several, the count is each one's estimate, and the table may
// hold a few more or fewer tasks than the cap.
var pgMigrations = store.SQL(`CREATE TABLE a2a_tasks (
	id         TEXT PRIMARY KEY,
	context_id TEXT NOT NULL,
	state      TEXT NOT NULL,
	version    BIGINT NOT NULL,
	updated_ns BIGINT NOT NULL,
	task       TEXT NOT NULL,
	status_ns  BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX a2a_tasks_context ON a2a_tasks (context_id, updated_ns);
CREATE INDEX a2a_tasks_updated ON a2a_tasks (updated_ns, state);`,
	addNodeColumn, contextIndex)
