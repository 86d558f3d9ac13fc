// Package memory is the agent's long-term memory of its users (seed 004's
// add_user_memory, search_user_memories and delete_user_memory), kept in the
// agent's database (agent/store: SQLite's agent.db, or PostgreSQL).
//
// A Store keeps memories per user: Add, Search and Delete. Memories survive
// restarts; one user never sees another's; several serve processes may share
// one database. Search ranks Chinese as well as English without a dictionary
// or a model: text is cut into Latin words and CJK character bigrams
// (tokenize.go), stored per memory as a column of space-separated terms, and
// indexed as they are: on SQLite by a contentless FTS5 table ranked with
// bm25() (sqlite.go), on PostgreSQL by a tsvector column made of the same
// terms under a GIN index, ranked with ts_rank() (postgres.go). A query's
// terms are matched with OR, topics counting double; relevance is in [0, 1]
// (see Store.Search). A memory that shares no term with the query is not
// returned. Index terms carry their user's uid, so a search reads only its
// user's postings and the words of one user's memories do not move another's
// scores. bm25() costs a few microseconds for each memory that holds any
// query term: a search of 1,000 memories takes about 2 ms, of 10,000 with a
// word most of them hold (用户, "user") 25-45 ms (BenchmarkSearch10k, which
// measures PostgreSQL too).
//
// RegisterTools declares the three tools, main_type local, on a
// tools.Registry for the agent's planners.
package memory
