// Package memory is the agent's long-term memory of its users (seed 004's
// add_user_memory, search_user_memories and delete_user_memory), kept in a
// SQLite database in the state directory.
//
// OpenDB opens that database (pure Go, modernc.org/sqlite) and refuses a
// corrupt or read-only file at start with an *OpenError that says what to
// do. The *sql.DB is shared with other packages (the A2A task store), which
// version their own tables with Migrate (MigrateSteps when a step needs Go).
//
// A Store keeps memories per user: Add, Search and Delete. Memories survive
// restarts; one user never sees another's. Search ranks Chinese as well as
// English without a dictionary or a model: text is cut into Latin words and
// CJK character bigrams (tokenize.go), stored per memory as a column of
// space-separated terms, and indexed by a contentless SQLite FTS5 table that
// keeps the terms as they are. A query's terms are matched with OR and
// ranked by bm25(), topics counting double; relevance is in [0, 1] (see
// Store.Search). A memory that shares no term with the query is not returned.
// FTS5 terms carry their user's uid, so a search reads only its user's
// postings and the words of one user's memories do not move another's
// scores. bm25() costs a few microseconds for each memory that holds any
// query term: a search of 1,000 memories takes about 2 ms, of 10,000 with a
// word most of them hold (用户, "user") 25-45 ms (BenchmarkSearch10k).
//
// The terms column is the portable part: a PostgreSQL store would index it
// with to_tsvector('simple', tokens) and rank with ts_rank, filtered by user.
//
// RegisterTools declares the three tools, main_type local, on a
// tools.Registry for the agent's planners.
package memory
