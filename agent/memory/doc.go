// Package memory is the agent's long-term memory of its users (seed 004's
// add_user_memory, search_user_memories and delete_user_memory), kept in a
// SQLite database in the state directory.
//
// OpenDB opens that database (pure Go, modernc.org/sqlite) and refuses a
// corrupt or read-only file at start with an *OpenError that says what to
// do. The *sql.DB is shared with other packages (the A2A task store), which
// version their own tables with Migrate.
//
// A Store keeps memories per user: Add, Search and Delete. Memories survive
// restarts; one user never sees another's. Search ranks Chinese as well as
// English without a dictionary or a model: text is cut into Latin words and
// CJK character bigrams (tokenize.go), kept in an inverted index, and scored
// by how much of the query a memory covers, weighted by rarity, with topics
// counting double (rank.go). Relevance is in [0, 1]; a memory that shares no
// term with the query is not returned. The postings of recently searched
// users' terms are cached in memory and checked against the database on
// every search (index.go), so a search of 10,000 memories takes about a
// millisecond and still sees writes made by another process.
//
// RegisterTools declares the three tools, main_type local, on a
// tools.Registry for the agent's planners.
package memory
